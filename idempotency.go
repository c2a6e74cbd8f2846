package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/idem"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// Idempotency keys (draft-ietf-httpapi-idempotency-key-header, as Stripe practises it): a
// write operation called with a key runs at most once per key and caller. Its outcome is
// stored under the key in the same transaction as its change, so a crash keeps both or
// neither; a retry with the same key and the same request gets the stored outcome back and
// nothing runs again.

// DefaultIdempotencyTTL is how long an idempotency key is remembered by default.
const DefaultIdempotencyTTL = 24 * time.Hour

// MaxIdempotencyKeyLength bounds a key: 1 to 255 printable ASCII characters.
const MaxIdempotencyKeyLength = 255

// Idempotency is the key of one call of a write operation, and what became of it. The call
// is given it with WithKey, and reports in it whether its outcome was replayed and when that
// outcome was first produced:
//
//	idem := &payments.Idempotency{Key: "order-1234"}
//	user, err := svc.CreateUser(ctx, platformID, in, payments.WithKey(idem))
//	// Sent again with the same key and input: the same user (or the same error), and
//	// idem.Replayed is true.
//
// The same key with another input is CodeInvalid; the same key while its first call still
// runs is CodeConflict. Outcomes stored: success, and the operation's own refusals
// (CodeNotFound, CodeForbidden, CodeConflict). Not stored, as the operation never started
// or may succeed when retried: validation failures (CodeInvalid) and internal faults.
//
// What is stored is the operation's outcome (its result, or its error's code and message)
// and the time of the first call, never a rendering of it: a server renders a first answer
// and its replays alike, from the outcome the call returns and At.
//
// An Idempotency reports one call at a time: give each call its own, or read what it
// reports before the next call with it; calls running at once need one each.
type Idempotency struct {
	// Key is the client's key: 1 to 255 printable ASCII characters.
	Key string
	// Fingerprint identifies the request; the same key with another fingerprint is
	// refused. Empty: a hash of the operation's name and input.
	Fingerprint []byte

	// Replayed, At and Response are set by each call made with the key (and cleared at
	// its start). Replayed reports whether the outcome is the one an earlier call stored
	// under the key.
	Replayed bool
	// At is the time of the call whose outcome is stored under the key: this one, or the
	// earlier one it replays. Zero when the outcome is not stored.
	At time.Time
	// Response is the response stored with the outcome by an earlier version of this
	// module, whose HTTP layer stored its rendering: a replay answers it as it is. Nil for
	// an outcome stored since.
	Response *StoredResponse
}

// StoredResponse is a response stored with an idempotency key's outcome by an earlier
// version of this module: its HTTP status and body.
type StoredResponse struct {
	Status int
	Body   []byte
}

// ValidIdempotencyKey reports whether key is 1 to 255 printable ASCII characters.
func ValidIdempotencyKey(key string) bool { return idem.ValidKey(key) }

// attempt is a first call under a key, on its way to storing its outcome.
type attempt = idem.Attempt

func platformScope(platformID uuid.UUID) string { return "platform:" + platformID.String() }
func userScope(userID uuid.UUID) string         { return "user:" + userID.String() }

// once runs the write operation op of the caller scope. Without a key (in nil), run
// runs with a nil attempt. With one, the outcome stored under the key is returned without
// running op again; or, the first time, run runs with the attempt and its outcome is
// stored: a success by the operation itself, which hands the attempt to writeRemembering
// (in the transaction of its change), a refusal here.
func once[T any](ctx context.Context, s *Service, in *Idempotency, scope, op string, input any, run func(a *attempt) (T, error)) (T, error) {
	var zero T
	if in == nil {
		return run(nil)
	}
	in.Replayed, in.At, in.Response = false, time.Time{}, nil
	if !ValidIdempotencyKey(in.Key) {
		return zero, Errorf(CodeInvalid, "An Idempotency-Key is 1 to %d printable ASCII characters.", MaxIdempotencyKeyLength)
	}
	fingerprint := in.Fingerprint
	if len(fingerprint) == 0 {
		var err error
		if fingerprint, err = idem.Fingerprint(op, input); err != nil {
			return zero, err
		}
	}
	scope += " " + op
	id := scope + "\n" + in.Key
	if !s.idem.Start(id) {
		return zero, errKeyInFlight
	}
	defer s.idem.Done(id)

	now := s.Now()
	var found *idem.Stored
	err := s.query(ctx, func(q store.Querier) (err error) {
		found, err = s.idem.Find(ctx, q, scope, in.Key, fingerprint, now)
		return err
	})
	switch {
	case errors.Is(err, idem.ErrOtherRequest):
		return zero, Errorf(CodeInvalid, "This Idempotency-Key was already used with a different request.")
	case err != nil:
		return zero, err
	case found != nil:
		return replay[T](in, found)
	}

	a := &attempt{Scope: scope, Key: in.Key, Fingerprint: fingerprint, At: now}
	result, err := run(a)
	switch ErrorCode(err) {
	case "":
		if !a.Stored {
			return zero, fmt.Errorf("payments: %s did not store its outcome under its idempotency key", op)
		}
	case CodeNotFound, CodeForbidden, CodeConflict:
		// The operation refused and changed nothing: its refusal is the outcome to keep.
		if serr := s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error { return s.storeOutcome(ctx, q, a, nil, err) }); serr != nil {
			return zero, serr
		}
	default:
		return result, err
	}
	in.At = a.At // committed
	return result, err
}

var errKeyInFlight = Errorf(CodeConflict, "A request with this Idempotency-Key is still being processed.")

// writeRemembering is write for an operation that may run under an idempotency key, as
// attempt a (nil: without a key): once fn has made the change, the result (which result
// returns) is stored under the key in the same transaction (in the operation's savepoint
// of its batch: both or neither).
func (s *Service) writeRemembering(ctx context.Context, opts store.WriteOptions, a *attempt, result func() any, fn func(ctx context.Context, q store.Querier) error) error {
	if a == nil {
		return s.write(ctx, opts, fn)
	}
	return s.write(ctx, opts, func(ctx context.Context, q store.Querier) error {
		if err := fn(ctx, q); err != nil {
			return err
		}
		return s.storeOutcome(ctx, q, a, result(), nil)
	})
}

// createUserRemembering is writeRemembering for a write that creates a user first
// (store.Store.CreateUser): fn runs with the user as stored.
func (s *Service) createUserRemembering(ctx context.Context, opts store.WriteOptions, u func() store.NewUserRows, a *attempt, result func() any, fn func(ctx context.Context, q store.Querier, user queries.User) error) error {
	if s.readOnly {
		return errReadOnly
	}
	return s.written(s.store.CreateUser(ctx, opts, u, func(ctx context.Context, q store.Querier, user queries.User) error {
		if err := fn(ctx, q, user); err != nil || a == nil {
			return err
		}
		return s.storeOutcome(ctx, q, a, result(), nil)
	}))
}

// storeOutcome stores the outcome of attempt a in the transaction of q: result, or the
// operation's refusal opErr.
func (s *Service) storeOutcome(ctx context.Context, q store.Querier, a *attempt, result any, opErr error) error {
	var code, message string
	if opErr != nil {
		code, message = string(ErrorCode(opErr)), ErrorMessage(opErr)
	}
	err := s.idem.Store(ctx, q, a, result, code, message)
	if errors.Is(err, idem.ErrRaced) {
		return errKeyInFlight // another process's first call ran
	}
	return err
}

// replay returns the outcome found stored under in's key.
func replay[T any](in *Idempotency, found *idem.Stored) (T, error) {
	var result T
	in.Replayed, in.At = true, found.At
	if found.Body != nil && found.Status != nil { // stored by an earlier version: replayed as it is
		in.Response = &StoredResponse{Status: int(*found.Status), Body: found.Body}
	}
	if found.Code != nil {
		return result, &Error{Code: Code(*found.Code), Message: *found.Message}
	}
	if err := json.Unmarshal(found.Result, &result); err != nil {
		return result, fmt.Errorf("payments: replay the outcome under key %q: %w", in.Key, err)
	}
	return result, nil
}

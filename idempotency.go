package payments

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

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
func ValidIdempotencyKey(key string) bool {
	if len(key) == 0 || len(key) > MaxIdempotencyKeyLength {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// attempt is a first call under a key, on its way to storing its outcome.
type attempt struct {
	scope, key  string
	fingerprint []byte
	at          time.Time
	// stored is set once the outcome is stored; it is the caller's only once its
	// transaction commits.
	stored bool
}

// inflight holds the keys whose first call is running in this process.
type inflight struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (f *inflight) start(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keys == nil {
		f.keys = map[string]bool{}
	}
	if f.keys[id] {
		return false
	}
	f.keys[id] = true
	return true
}

func (f *inflight) done(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.keys, id)
}

func platformScope(platformID uuid.UUID) string { return "platform:" + platformID.String() }
func userScope(userID uuid.UUID) string         { return "user:" + userID.String() }

// once runs the write operation op of the caller scope. Without a key (idem nil), run
// runs with a nil attempt. With one, the outcome stored under the key is returned without
// running op again; or, the first time, run runs with the attempt and its outcome is
// stored: a success by the operation itself, which hands the attempt to writeRemembering
// (in the transaction of its change), a refusal here.
func once[T any](ctx context.Context, s *Service, idem *Idempotency, scope, op string, input any, run func(a *attempt) (T, error)) (T, error) {
	var zero T
	if idem == nil {
		return run(nil)
	}
	idem.Replayed, idem.At, idem.Response = false, time.Time{}, nil
	if !ValidIdempotencyKey(idem.Key) {
		return zero, Errorf(CodeInvalid, "An Idempotency-Key is 1 to %d printable ASCII characters.", MaxIdempotencyKeyLength)
	}
	fingerprint := idem.Fingerprint
	if len(fingerprint) == 0 {
		raw, err := json.Marshal(input)
		if err != nil {
			return zero, fmt.Errorf("payments: fingerprint of %s: %w", op, err)
		}
		sum := sha256.Sum256(append([]byte(op+"\n"), raw...))
		fingerprint = sum[:]
	}
	scope += " " + op
	id := scope + "\n" + idem.Key
	if !s.inflight.start(id) {
		return zero, errKeyInFlight
	}
	defer s.inflight.done(id)

	now := s.Now()
	var rec queries.IdempotencyKey
	err := s.query(ctx, func(q store.Querier) (err error) {
		rec, err = q.GetIdempotencyRecord(ctx, queries.GetIdempotencyRecordParams{
			Scope: scope, Key: idem.Key, NotBefore: formatTime(now.Add(-s.idempotencyTTL)),
		})
		return err
	})
	switch {
	case err == nil:
		if !bytes.Equal(rec.Fingerprint, fingerprint) {
			return zero, Errorf(CodeInvalid, "This Idempotency-Key was already used with a different request.")
		}
		return replay[T](s, idem, rec)
	case !errors.Is(err, sql.ErrNoRows):
		return zero, err
	}

	a := &attempt{scope: scope, key: idem.Key, fingerprint: fingerprint, at: now}
	result, err := run(a)
	switch ErrorCode(err) {
	case "":
		if !a.stored {
			return zero, fmt.Errorf("payments: %s did not store its outcome under its idempotency key", op)
		}
	case CodeNotFound, CodeForbidden, CodeConflict:
		// The operation refused and changed nothing: its refusal is the outcome to keep.
		if serr := s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error { return a.store(ctx, s, q, nil, err) }); serr != nil {
			return zero, serr
		}
	default:
		return result, err
	}
	idem.At = a.at // committed
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
		return a.store(ctx, s, q, result(), nil)
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
		return a.store(ctx, s, q, result(), nil)
	}))
}

// outcome is what a record keeps of an outcome that may hold what the answer held (names,
// a payee bank's full account number): stored sealed under the data key.
type outcome struct {
	Result json.RawMessage `json:"result,omitempty"` // the operation's result
	// Body is the response an earlier version's HTTP layer rendered, stored beside the
	// result (its status in the record's status column). It is read, to replay it as it
	// is, and never written: since, a server renders replays from the result.
	Body []byte `json:"body,omitempty"`
}

// store records the outcome of the attempt in the transaction of q.
func (a *attempt) store(ctx context.Context, s *Service, q store.Querier, result any, opErr error) error {
	rec := queries.CreateIdempotencyRecordParams{
		ID: s.newID().String(), Scope: a.scope, Key: a.key, Fingerprint: a.fingerprint, CreatedAt: formatTime(a.at),
	}
	var out outcome
	if opErr != nil {
		rec.ErrorCode, rec.ErrorMessage = new(string(ErrorCode(opErr))), new(ErrorMessage(opErr))
	} else {
		raw, err := json.Marshal(result)
		if err != nil {
			return fmt.Errorf("payments: store the outcome of %s: %w", a.scope, err)
		}
		out.Result = raw
	}
	plain, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("payments: store the outcome of %s: %w", a.scope, err)
	}
	rec.OutcomeSealed = s.keys.Seal(plain, idempotencyOutcomeAAD(rec.ID))
	clear(plain)
	// An expired record of this key makes way; so, once a minute, do all expired ones.
	notAfter := formatTime(a.at.Add(-s.idempotencyTTL))
	if err := q.DeleteExpiredIdempotencyKey(ctx, queries.DeleteExpiredIdempotencyKeyParams{
		Scope: a.scope, Key: a.key, NotAfter: notAfter}); err != nil {
		return err
	}
	if s.purgeDue(a.at) {
		if _, err := q.DeleteExpiredIdempotencyRecords(ctx, notAfter); err != nil {
			return err
		}
	}
	if err := q.CreateIdempotencyRecord(ctx, rec); err != nil {
		if c, ok := s.store.Conflict(err); ok && c == store.IdempotencyKey {
			// Another process stored an outcome under this key first: its call ran.
			return errKeyInFlight
		}
		return err
	}
	a.stored = true
	return nil
}

// replay returns the outcome stored in rec.
func replay[T any](s *Service, idem *Idempotency, rec queries.IdempotencyKey) (T, error) {
	var result T
	plain, err := s.keys.Open(rec.OutcomeSealed, idempotencyOutcomeAAD(rec.ID))
	if err != nil {
		return result, fmt.Errorf("payments: the outcome stored under idempotency key %q: %w", idem.Key, err)
	}
	var out outcome
	err = json.Unmarshal(plain, &out)
	clear(plain)
	if err != nil {
		return result, fmt.Errorf("payments: the outcome stored under idempotency key %q: %w", idem.Key, err)
	}
	at, err := parseTime(rec.CreatedAt)
	if err != nil {
		return result, err
	}
	idem.Replayed, idem.At = true, at
	if out.Body != nil && rec.Status != nil { // stored by an earlier version: replayed as it is
		idem.Response = &StoredResponse{Status: int(*rec.Status), Body: out.Body}
	}
	if rec.ErrorCode != nil {
		return result, &Error{Code: Code(*rec.ErrorCode), Message: *rec.ErrorMessage}
	}
	if err := json.Unmarshal(out.Result, &result); err != nil {
		return result, fmt.Errorf("payments: replay the outcome under key %q: %w", idem.Key, err)
	}
	return result, nil
}

// purgeDue reports whether expired idempotency records are due for purging: at most once
// a minute.
func (s *Service) purgeDue(now time.Time) bool {
	s.purgeMu.Lock()
	defer s.purgeMu.Unlock()
	if now.Sub(s.lastPurge) < time.Minute {
		return false
	}
	s.lastPurge = now
	return true
}

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
// is made through a service scoped to it (Service.Idempotent) and reports its outcome in
// Replayed, Status and Body:
//
//	idem := &payments.Idempotency{Key: "order-1234"}
//	user, err := svc.Idempotent(idem).CreateUser(ctx, platformID, in)
//	// Sent again with the same key and input: the same user (or the same error), and
//	// idem.Replayed is true.
//
// The same key with another input is CodeInvalid; the same key while its first call still
// runs is CodeConflict. Outcomes stored: success, and the operation's own refusals
// (CodeNotFound, CodeForbidden, CodeConflict). Not stored, as the operation never started
// or may succeed when retried: validation failures (CodeInvalid) and internal faults.
//
// An Idempotency reports one call at a time: give each call its own, or read its outcome
// before the next call through the same scope; calls running at once need one each.
type Idempotency struct {
	// Key is the client's key: 1 to 255 printable ASCII characters.
	Key string
	// Fingerprint identifies the request; the same key with another fingerprint is
	// refused. Empty: a hash of the operation's name and input.
	Fingerprint []byte
	// Render, when set, turns the outcome into the response stored with it and replayed
	// byte for byte (the HTTP layer renders its status and body here). at is the time of
	// the first call, for every replay too. The operation calls it in the transaction of
	// its change: a panic undoes both.
	Render func(result any, err error, at time.Time) (status int, body []byte)

	// Set by each call made under the key (and cleared at its start): whether the
	// outcome was replayed, and the stored response (when Render was given and the
	// outcome is one that is stored).
	Replayed bool
	Status   int
	Body     []byte
}

// Idempotent returns s scoped to idem: a copy of the service (sharing its store, keys and
// caches) whose write operations run at most once per idem.Key and report their outcome
// in idem. s itself is unchanged: its calls are not idempotent unless they are made through
// the scope. A nil idem returns s without a key.
//
// The write operations that take a key are CreateUser, CreatePayee, UpdatePayee,
// AddBankAccount, DeleteCard, AddPayeeBank and DeletePayeeBank; the others, and every
// read, run as through s.
func (s *Service) Idempotent(idem *Idempotency) *Service {
	if idem == nil && s.idem == nil {
		return s
	}
	scoped := *s
	scoped.idem = idem
	return &scoped
}

type idempotencyKey struct{}

// WithIdempotency returns a context that makes the write operation it is passed to
// idempotent under idem.Key, and reports its outcome in idem. A key given with Idempotent
// takes precedence.
//
// Deprecated: use Service.Idempotent, which shows where the call is written that it is
// idempotent: svc.Idempotent(idem).CreateUser(ctx, platformID, in).
func WithIdempotency(ctx context.Context, idem *Idempotency) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, idem)
}

// idempotency returns the key a call of s runs under: the scope's, else one that a caller
// of the deprecated WithIdempotency put in ctx; nil when it has none.
func (s *Service) idempotency(ctx context.Context) *Idempotency {
	if s.idem != nil {
		return s.idem
	}
	idem, _ := ctx.Value(idempotencyKey{}).(*Idempotency)
	return idem
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
	idem        *Idempotency
	at          time.Time
	// The outcome once stored; it is the caller's only once its transaction commits.
	stored bool
	status int
	body   []byte
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

// once runs the write operation op of the caller scope. Without a key (Idempotent), run
// runs with a nil attempt. With one, the outcome stored under the key is returned without
// running op again; or, the first time, run runs with the attempt and its outcome is
// stored: a success by the operation itself, which hands the attempt to writeRemembering
// (in the transaction of its change), a refusal here.
func once[T any](ctx context.Context, s *Service, scope, op string, input any, run func(a *attempt) (T, error)) (T, error) {
	var zero T
	idem := s.idempotency(ctx)
	if idem == nil {
		return run(nil)
	}
	idem.Replayed, idem.Status, idem.Body = false, 0, nil
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

	a := &attempt{scope: scope, key: idem.Key, fingerprint: fingerprint, idem: idem, at: now}
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
	idem.Status, idem.Body = a.status, a.body // committed
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

// outcome is what a record keeps of an answer that may hold what the answer held (names,
// a payee bank's full account number): stored sealed under the data key.
type outcome struct {
	Result json.RawMessage `json:"result,omitempty"` // the operation's result, for Go callers
	Body   []byte          `json:"body,omitempty"`   // the rendered response, for HTTP
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
	var status int // none (NULL) when no response is rendered: a Go caller's key
	if a.idem.Render != nil {
		status, out.Body = a.idem.Render(result, opErr, a.at)
		rec.Status = new(int64(status))
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
	a.stored, a.status, a.body = true, status, out.Body
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
	idem.Replayed = true
	idem.Status, idem.Body = 0, out.Body
	if rec.Status != nil {
		idem.Status = int(*rec.Status)
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

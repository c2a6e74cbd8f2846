// Package idem keeps the outcomes of calls made under idempotency keys
// (draft-ietf-httpapi-idempotency-key-header): each stored sealed under the service's data
// key, in the transaction of the call's change, and read back for a retry. Package
// payments decides what an outcome is (its Idempotency type, and once, which runs a call
// at most once per key); this package stores, finds and purges them.
package idem

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/stored"
	"github.com/platform-payments/payments/queries"
)

// MaxKeyLength bounds a key: 1 to 255 printable ASCII characters.
const MaxKeyLength = 255

// ValidKey reports whether key is 1 to MaxKeyLength printable ASCII characters.
func ValidKey(key string) bool {
	if len(key) == 0 || len(key) > MaxKeyLength {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// Fingerprint identifies a call of operation op with input: a hash of both.
func Fingerprint(op string, input any) ([]byte, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("payments: fingerprint of %s: %w", op, err)
	}
	sum := sha256.Sum256(append([]byte(op+"\n"), raw...))
	return sum[:], nil
}

// Errors of Find and Store.
var (
	// ErrOtherRequest: the key's outcome is of a call with another fingerprint.
	ErrOtherRequest = errors.New("idem: the key was used with another request")
	// ErrRaced: another process stored an outcome under the key first; its call ran.
	ErrRaced = errors.New("idem: an outcome is stored under the key already")
)

// Records finds and stores outcomes. Its zero value is not usable: give it its fields.
type Records struct {
	Keys      *seal.Keyring        // the data keys outcomes are sealed under
	TTL       time.Duration        // how long a key is remembered
	NewID     func() string        // a new record's id
	Conflict  func(err error) bool // whether err refuses a record as a duplicate key
	running   map[string]bool      // the keys whose first call runs in this process
	mu        sync.Mutex           // guards running and lastPurge
	lastPurge time.Time
}

// Start marks the first call under id (scope and key) as running in this process, and
// reports false when one already is.
func (r *Records) Start(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil {
		r.running = map[string]bool{}
	}
	if r.running[id] {
		return false
	}
	r.running[id] = true
	return true
}

// Done marks the call Start marked as ended.
func (r *Records) Done(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, id)
}

// purgeDue reports whether expired records are due for purging: at most once a minute.
func (r *Records) purgeDue(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.lastPurge) < time.Minute {
		return false
	}
	r.lastPurge = now
	return true
}

// Attempt is a first call under a key, on its way to storing its outcome.
type Attempt struct {
	Scope, Key  string
	Fingerprint []byte
	At          time.Time
	// Stored is set once the outcome is stored; it is the caller's only once its
	// transaction commits.
	Stored bool
}

// Outcome is what a record keeps sealed of an outcome that may hold what the answer held
// (names, a payee bank's full account number).
type Outcome struct {
	Result json.RawMessage `json:"result,omitempty"` // the operation's result
	// Body is the response an earlier version's HTTP layer rendered, stored beside the
	// result (its status in the record's status column). It is read, to replay it as it
	// is, and never written: since, a server renders replays from the result.
	Body []byte `json:"body,omitempty"`
}

// Stored is an outcome found under a key.
type Stored struct {
	Outcome
	At time.Time // the time of the call that stored it
	// Code and Message are the operation's refusal; nil for a success.
	Code, Message *string
	Status        *int64 // the status an earlier version stored with Body
}

// Find returns the outcome stored under key in scope within the TTL before now; nil when
// none is. ErrOtherRequest: the one stored is of a call with another fingerprint.
func (r *Records) Find(ctx context.Context, q store.Querier, scope, key string, fingerprint []byte, now time.Time) (*Stored, error) {
	rec, err := q.GetIdempotencyRecord(ctx, queries.GetIdempotencyRecordParams{
		Scope: scope, Key: key, NotBefore: stored.Time(now.Add(-r.TTL)),
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	case string(rec.Fingerprint) != string(fingerprint):
		return nil, ErrOtherRequest
	}
	plain, err := r.Keys.Open(rec.OutcomeSealed, seal.IdempotencyOutcomeAAD(rec.ID))
	if err != nil {
		return nil, fmt.Errorf("payments: the outcome stored under idempotency key %q: %w", key, err)
	}
	out := &Stored{Code: rec.ErrorCode, Message: rec.ErrorMessage, Status: rec.Status}
	err = json.Unmarshal(plain, &out.Outcome)
	clear(plain)
	if err != nil {
		return nil, fmt.Errorf("payments: the outcome stored under idempotency key %q: %w", key, err)
	}
	if out.At, err = stored.ParseTime(rec.CreatedAt); err != nil {
		return nil, err
	}
	return out, nil
}

// Store records the outcome of the attempt in the transaction of q: result, or (with
// code set) the operation's refusal. An expired record of the key makes way; so, once a
// minute, do all expired ones. ErrRaced: another process stored an outcome first.
func (r *Records) Store(ctx context.Context, q store.Querier, a *Attempt, result any, code, message string) error {
	rec := queries.CreateIdempotencyRecordParams{
		ID: r.NewID(), Scope: a.Scope, Key: a.Key, Fingerprint: a.Fingerprint, CreatedAt: stored.Time(a.At),
	}
	var out Outcome
	if code != "" {
		rec.ErrorCode, rec.ErrorMessage = &code, &message
	} else {
		raw, err := json.Marshal(result)
		if err != nil {
			return fmt.Errorf("payments: store the outcome of %s: %w", a.Scope, err)
		}
		out.Result = raw
	}
	plain, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("payments: store the outcome of %s: %w", a.Scope, err)
	}
	rec.OutcomeSealed = r.Keys.Seal(plain, seal.IdempotencyOutcomeAAD(rec.ID))
	clear(plain)
	notAfter := stored.Time(a.At.Add(-r.TTL))
	if err := q.DeleteExpiredIdempotencyKey(ctx, queries.DeleteExpiredIdempotencyKeyParams{
		Scope: a.Scope, Key: a.Key, NotAfter: notAfter}); err != nil {
		return err
	}
	if r.purgeDue(a.At) {
		if _, err := q.DeleteExpiredIdempotencyRecords(ctx, notAfter); err != nil {
			return err
		}
	}
	if err := q.CreateIdempotencyRecord(ctx, rec); err != nil {
		if r.Conflict(err) {
			return ErrRaced
		}
		return err
	}
	a.Stored = true
	return nil
}

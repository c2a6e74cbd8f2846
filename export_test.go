package payments

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/idem"
	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/groupcommit"
	"github.com/platform-payments/payments/internal/store/postgres"
	"github.com/platform-payments/payments/internal/store/sqlite"
	"github.com/platform-payments/payments/queries"
)

// Internals the external tests use to check what the store holds.

// The associated data each sealed column binds its values to.
var (
	PlatformSecretAAD    = seal.PlatformSecretAAD
	BankAccountNumberAAD = seal.BankAccountNumberAAD
	PayeeBankNumberAAD   = seal.PayeeBankNumberAAD
)

// Unseal opens a value the service stored sealed, with the service's keys.
func (s *Service) Unseal(sealed, aad string) (string, error) {
	b, err := s.keys.Open(sealed, aad)
	return string(b), err
}

// AccountIndex is the blind index the service computes for a linked account number.
func (s *Service) AccountIndex(userID, routingNumber, accountNumber string) []byte {
	return s.index.BankAccount(userID, routingNumber, accountNumber)
}

// Validations returns how many requests the service has validated against their schemas.
func Validations(s *Service) int64 { return s.schemas.Validations() }

// Write runs fn as one write operation, in a batch, as the service's operations do.
func (s *Service) Write(ctx context.Context, fn func(ctx context.Context, q store.Querier) error) error {
	return s.write(ctx, store.WriteOptions{}, fn)
}

// WritesWaiting is the number of write operations waiting to be taken into a batch.
func (s *Service) WritesWaiting() int64 { return s.committer().WritesWaiting() }

// Committed returns the batches committed so far and the operations they carried.
func (s *Service) Committed() (batches, ops int64) {
	st := s.store.Stats()
	return st.Commits, st.CommittedOps
}

// BreakNextCommit makes the database refuse the next batch's COMMIT, as it refuses one
// that leaves a deferred foreign key violated: a child row without its parent, in
// temporary tables made for it in the batch's transaction.
func (s *Service) BreakNextCommit() {
	stmts := []string{
		"PRAGMA defer_foreign_keys = ON",
		"CREATE TEMP TABLE broken_parent (id INTEGER PRIMARY KEY)",
		"CREATE TEMP TABLE broken_child (parent INTEGER REFERENCES broken_parent (id))",
		"INSERT INTO broken_child VALUES (1)",
	}
	if _, ok := s.store.(*postgres.Store); ok {
		stmts = []string{
			"CREATE TEMP TABLE broken_parent (id INTEGER PRIMARY KEY) ON COMMIT DROP",
			"CREATE TEMP TABLE broken_child (parent INTEGER REFERENCES broken_parent (id) DEFERRABLE INITIALLY DEFERRED) ON COMMIT DROP",
			"INSERT INTO broken_child VALUES (1)",
		}
	}
	s.committer().BeforeCommit(func(ctx context.Context, tx groupcommit.Execer) error {
		s.committer().BeforeCommit(nil) // once
		for _, stmt := range stmts {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}

// groupCommitter is what the tests watch of an engine's group committer.
type groupCommitter interface {
	WritesWaiting() int64
	BeforeCommit(hook func(ctx context.Context, x groupcommit.Execer) error)
}

var (
	_ groupCommitter = (*sqlite.Store)(nil)
	_ groupCommitter = (*postgres.Store)(nil)
)

// committer is the store of the service, whose group committer the tests watch.
func (s *Service) committer() groupCommitter { return s.store.(groupCommitter) }

// ShortenWriteWait makes the SQLite writer wait ms milliseconds for another process's
// lock instead of its busy_timeout's 10 s, from the next batch on: the hook sets it in
// that batch's transaction, on the connection every batch uses.
func (s *Service) ShortenWriteWait(ms int) {
	s.committer().BeforeCommit(func(ctx context.Context, tx groupcommit.Execer) error {
		s.committer().BeforeCommit(nil) // once
		_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", ms))
		return err
	})
}

// Plain returns opts with the named speed devices turned off, for the benchmarks that
// measure what each pays: "groupcommit", "gather", "pipeline", "batchedcreates" (the
// engine's), "usercache".
func Plain(opts Options, devices ...string) Options {
	for _, d := range devices {
		switch d {
		case "groupcommit":
			opts.plain.store.GroupCommit = true
		case "gather":
			opts.plain.store.Gather = true
		case "pipeline":
			opts.plain.store.Pipeline = true
		case "batchedcreates":
			opts.plain.store.BatchedCreates = true
		case "usercache":
			opts.plain.userCache = true
		case "":
		default:
			panic("payments.Plain: no device " + d)
		}
	}
	return opts
}

// StoreRendered rewrites the outcome the platform's operation op stored under key into the
// form of the versions whose HTTP layer stored its rendering with it: status in the
// record's column, body sealed beside the result.
func (s *Service) StoreRendered(ctx context.Context, platformID uuid.UUID, op, key string, status int, body []byte) error {
	scope := platformScope(platformID) + " " + op
	return s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		rec, err := q.GetIdempotencyRecord(ctx, queries.GetIdempotencyRecordParams{Scope: scope, Key: key, NotBefore: formatTime(time.Time{})})
		if err != nil {
			return err
		}
		plain, err := s.keys.Open(rec.OutcomeSealed, seal.IdempotencyOutcomeAAD(rec.ID))
		if err != nil {
			return err
		}
		var out idem.Outcome
		if err := json.Unmarshal(plain, &out); err != nil {
			return err
		}
		out.Body = body
		if plain, err = json.Marshal(out); err != nil {
			return err
		}
		if err := q.DeleteExpiredIdempotencyKey(ctx, queries.DeleteExpiredIdempotencyKeyParams{Scope: scope, Key: key, NotAfter: rec.CreatedAt}); err != nil {
			return err
		}
		return q.CreateIdempotencyRecord(ctx, queries.CreateIdempotencyRecordParams{
			ID: rec.ID, Scope: rec.Scope, Key: rec.Key, Fingerprint: rec.Fingerprint,
			ErrorCode: rec.ErrorCode, ErrorMessage: rec.ErrorMessage, Status: new(int64(status)),
			OutcomeSealed: s.keys.Seal(plain, seal.IdempotencyOutcomeAAD(rec.ID)), CreatedAt: rec.CreatedAt,
		})
	})
}

// EmitMarker records an event of the platform in q's write (emit), of type
// "user.created", whose object id is marker: a test tells it apart by that id.
func (s *Service) EmitMarker(ctx context.Context, q store.Querier, platformID uuid.UUID, marker string) error {
	return s.emit(ctx, q, platformID.String(), s.env, EventUserCreated, EventData{Object: EventObject{Type: "user", ID: marker}})
}

// SwitchEndpointSignature gives an endpoint a new key of the kind asked (ed25519 when
// asymmetric, else a v1 secret), the old one signing beside it for a day: what an update
// with "signature" does.
func (s *Service) SwitchEndpointSignature(ctx context.Context, platformID uuid.UUID, endpointID string, asymmetric bool) (WebhookEndpoint, error) {
	return s.changeEndpoint(ctx, platformID, endpointID, true, func(ctx context.Context, q store.Querier, id string) (queries.WebhookEndpoint, string, error) {
		return s.rekeyEndpoint(ctx, q, platformID, id, asymmetric)
	})
}

// WebhookSecretAAD is the associated data of an endpoint's sealed signing key.
var WebhookSecretAAD = seal.WebhookSecretAAD

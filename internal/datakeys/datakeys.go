// Package datakeys administers the data keys of a payments database: it sets them up
// when a service opens (the key file, the key checks, the blind-index key), reseals every
// value under the newest key and retires the older ones (a rotation), and reports which
// key seals how many values. Package seal does the sealing itself.
package datakeys

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/stored"
	"github.com/platform-payments/payments/queries"
)

// Config is how a service's keys are configured, and what their administration uses of
// the service.
type Config struct {
	// Keys are the configured keys, the newest first; empty: the one key in KeyFile.
	Keys []seal.Key
	// KeyFile is the file the key is read from, or created in for a new database, when
	// Keys is empty.
	KeyFile string
	// ReadOnly: create no key file and register no key.
	ReadOnly bool
	// Now is the service's clock.
	Now func() time.Time
	// Write runs fn as one of the service's writes, Read in one read transaction; Reads
	// are statements outside any transaction.
	Write func(ctx context.Context, fn func(ctx context.Context, q store.Querier) error) error
	Read  func(ctx context.Context, fn func(q store.Querier) error) error
	Reads func() store.Querier
	// Unavailable reports whether an error of Write says the database is out of reach,
	// so that a rotation tries again.
	Unavailable func(error) bool
}

// Keys are the data keys of an open service: the keyring that seals and opens its values
// and the blind index of account numbers, set at open and never changed, and their
// administration. It is safe for concurrent use.
type Keys struct {
	Ring  *seal.Keyring
	Index *seal.BlindIndex

	cfg          Config
	createdFile  string
	unregistered string
}

// keyCheckText is what data_keys.key_check holds, sealed under its key.
const keyCheckText = "payments data key check v1"

// Error is a data key problem found at open: reported as such, not as a failed
// migration.
type Error struct{ error }

func (e Error) Unwrap() error { return e.error }

// SetUp returns the keys of the database q reads, as cfg configures them. It runs in
// Open's migration transaction, so that two processes opening one new database agree on
// its first key. With no key given it reads the key file, creating it for a database that
// has no key yet. Each configured key the database knows must open its key check; a
// database whose values are sealed under none of the configured keys, or under a key not
// configured, is refused here rather than failing on a request. The newest configured key
// is registered when it is new: that is how a key rotation starts (idempotent: a key
// registered is known the next time). A read-only service creates no key file and
// registers nothing. Its errors about the keys are Error values.
func SetUp(ctx context.Context, q store.Querier, cfg Config) (*Keys, error) {
	s := &Keys{cfg: cfg}
	if err := s.setUp(ctx, q); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Keys) setUp(ctx context.Context, q store.Querier) error {
	opts := s.cfg
	known, err := q.ListDataKeys(ctx)
	if err != nil {
		return err
	}
	var live []string // keys that may still seal values
	knownByID := map[string]queries.DataKey{}
	for _, k := range known {
		knownByID[k.KeyID] = k
		if k.RetiredAt == nil {
			live = append(live, k.KeyID)
		}
	}

	keys := opts.Keys
	if len(keys) == 0 {
		file := opts.KeyFile
		k, err := seal.ReadKeyFile(file)
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist) && len(known) == 0 && !s.cfg.ReadOnly:
			k = seal.NewKey()
			if err := seal.WriteKeyFile(file, k); err != nil {
				return err
			}
			s.createdFile = file
		case errors.Is(err, fs.ErrNotExist):
			return Error{fmt.Errorf("%w: the key file %s does not exist, and this database's values are sealed under data key %s",
				seal.ErrMissingKey, file, strings.Join(live, ", "))}
		default:
			return Error{err}
		}
		keys = []seal.Key{k}
	}
	ring, err := seal.NewKeyring(keys)
	if err != nil {
		return Error{err}
	}

	write := ring.SealingID()
	anyKnown := false
	for i, id := range ring.IDs() {
		row, ok := knownByID[id]
		if !ok {
			if i == 0 {
				continue // a new key to seal with: registered below
			}
			return Error{fmt.Errorf("%w: data key %s, given as an older key, is not a key of this database", seal.ErrWrongKey, id)}
		}
		anyKnown = true
		if check, err := ring.Open(row.KeyCheck, seal.KeyCheckAAD(id)); err != nil || string(check) != keyCheckText {
			return Error{fmt.Errorf("%w: data key %s does not open this database's check of that key", seal.ErrWrongKey, id)}
		}
		if i == 0 && row.RetiredAt != nil {
			return Error{fmt.Errorf("%w: data key %s was retired at %s; seal with this database's current key %s",
				seal.ErrRetiredKey, id, *row.RetiredAt, strings.Join(live, ", "))}
		}
	}
	if _, ok := knownByID[write]; !ok {
		if len(known) > 0 && !anyKnown {
			return Error{fmt.Errorf("%w (key id %s; its values are sealed under key id %s)",
				seal.ErrWrongKey, write, strings.Join(live, ", "))}
		}
		if s.cfg.ReadOnly { // registers nothing: the service has the keys the database knows
			if ring, err = seal.NewKeyring(keys[1:]); err != nil {
				return Error{err}
			}
			s.unregistered, write = write, ring.SealingID()
		} else if err := q.AddDataKey(ctx, queries.AddDataKeyParams{
			KeyID:    write,
			KeyCheck: ring.Seal([]byte(keyCheckText), seal.KeyCheckAAD(write)),
			AddedAt:  stored.Time(s.cfg.Now()),
		}); err != nil {
			return err
		}
	}
	for _, id := range live {
		if !ring.Has(id) {
			return Error{fmt.Errorf("%w: values of this database are still sealed under data key %s "+
				"(a key rotation to %s is not finished): give that key too, as an older key", seal.ErrMissingKey, id, write)}
		}
	}

	root := make([]byte, 32)
	sealedRoot, err := q.GetBlindIndexKey(ctx)
	switch {
	case errors.Is(err, sql.ErrNoRows) && s.cfg.ReadOnly:
		err = errors.New("the database has none yet")
	case errors.Is(err, sql.ErrNoRows):
		rand.Read(root) // never returns an error (crypto/rand, Go 1.24+)
		err = q.CreateBlindIndexKey(ctx, queries.CreateBlindIndexKeyParams{
			KeySealed: ring.Seal(root, seal.BlindIndexKeyAAD),
			CreatedAt: stored.Time(s.cfg.Now()),
		})
	case err == nil:
		root, err = ring.Open(sealedRoot, seal.BlindIndexKeyAAD)
	}
	if err != nil {
		return fmt.Errorf("blind-index key: %w", err)
	}
	s.Ring, s.Index = ring, seal.NewBlindIndex(root)
	clear(root)
	return nil
}

// sealedRow is a row of a sealed column as a walk reads it.
type sealedRow struct {
	id, value string
	// For a linked bank account, what its blind index covers besides the number.
	userID, routingNumber string
}

// sealedColumn is one column of sealed values, walked a batch at a time in id order up to
// the last id there was when the walk started (rows added later are sealed under the
// newest key already, or found by the check that ends a rotation).
type sealedColumn struct {
	name string
	// since names the migration that made the column, when later than sealed_values.sql
	// (whose Go step, SealPlainValues, walks only the columns there were then: a later
	// column never held a plain value).
	since string
	aad   func(id string) string
	last  func(ctx context.Context) (string, error)
	list  func(ctx context.Context, q store.Querier, after, upto string, batch int64) ([]sealedRow, error)
	// set stores the value sealed anew (and, for an account number, its blind index).
	set func(ctx context.Context, q store.Querier, r sealedRow, sealed string, plain []byte) error
}

// sealedRows converts the rows a sealed column's query read.
func sealedRows[R any](rows []R, err error, row func(R) sealedRow) ([]sealedRow, error) {
	out := make([]sealedRow, len(rows))
	for i, r := range rows {
		out[i] = row(r)
	}
	return out, err
}

// sealedColumns are the columns of sealed values; q reads where each walk ends.
func (s *Keys) sealedColumns(q store.Querier) []sealedColumn {
	return []sealedColumn{{
		name: "platforms.secret",
		aad:  seal.PlatformSecretAAD,
		last: q.LastPlatformID,
		list: func(ctx context.Context, q store.Querier, after, upto string, batch int64) ([]sealedRow, error) {
			rows, err := q.PlatformSecretsAfter(ctx, queries.PlatformSecretsAfterParams{After: after, Upto: upto, Batch: batch})
			return sealedRows(rows, err, func(r queries.PlatformSecretsAfterRow) sealedRow { return sealedRow{id: r.ID, value: r.SecretSealed} })
		},
		set: func(ctx context.Context, q store.Querier, r sealedRow, sealed string, _ []byte) error {
			return q.SetPlatformSecret(ctx, queries.SetPlatformSecretParams{SecretSealed: sealed, ID: r.id})
		},
	}, {
		name: "bank_accounts.account_number",
		aad:  seal.BankAccountNumberAAD,
		last: q.LastBankAccountID,
		list: func(ctx context.Context, q store.Querier, after, upto string, batch int64) ([]sealedRow, error) {
			rows, err := q.BankAccountNumbersAfter(ctx, queries.BankAccountNumbersAfterParams{After: after, Upto: upto, Batch: batch})
			return sealedRows(rows, err, func(r queries.BankAccountNumbersAfterRow) sealedRow {
				return sealedRow{id: r.ID, value: r.AccountNumberSealed, userID: r.UserID, routingNumber: r.RoutingNumber}
			})
		},
		set: func(ctx context.Context, q store.Querier, r sealedRow, sealed string, plain []byte) error {
			return q.SetBankAccountNumber(ctx, queries.SetBankAccountNumberParams{
				AccountNumberSealed: sealed,
				AccountNumberIndex:  s.Index.BankAccount(r.userID, r.routingNumber, string(plain)),
				ID:                  r.id,
			})
		},
	}, {
		name: "payee_banks.account_number",
		aad:  seal.PayeeBankNumberAAD,
		last: q.LastPayeeBankID,
		list: func(ctx context.Context, q store.Querier, after, upto string, batch int64) ([]sealedRow, error) {
			rows, err := q.PayeeBankNumbersAfter(ctx, queries.PayeeBankNumbersAfterParams{After: after, Upto: upto, Batch: batch})
			return sealedRows(rows, err, func(r queries.PayeeBankNumbersAfterRow) sealedRow {
				return sealedRow{id: r.ID, value: r.AccountNumberSealed}
			})
		},
		set: func(ctx context.Context, q store.Querier, r sealedRow, sealed string, _ []byte) error {
			return q.SetPayeeBankNumber(ctx, queries.SetPayeeBankNumberParams{AccountNumberSealed: sealed, ID: r.id})
		},
	}, {
		name: "idempotency_keys.outcome",
		aad:  seal.IdempotencyOutcomeAAD,
		last: q.LastIdempotencyRecordID,
		list: func(ctx context.Context, q store.Querier, after, upto string, batch int64) ([]sealedRow, error) {
			rows, err := q.IdempotencyOutcomesAfter(ctx, queries.IdempotencyOutcomesAfterParams{After: after, Upto: upto, Batch: batch})
			return sealedRows(rows, err, func(r queries.IdempotencyOutcomesAfterRow) sealedRow {
				return sealedRow{id: r.ID, value: r.OutcomeSealed}
			})
		},
		set: func(ctx context.Context, q store.Querier, r sealedRow, sealed string, _ []byte) error {
			return q.SetIdempotencyOutcome(ctx, queries.SetIdempotencyOutcomeParams{OutcomeSealed: sealed, ID: r.id})
		},
	}, {
		name:  "webhook_endpoints.secret",
		since: "events.sql",
		aad:   seal.WebhookSecretAAD,
		last:  q.LastWebhookEndpointID,
		list: func(ctx context.Context, q store.Querier, after, upto string, batch int64) ([]sealedRow, error) {
			rows, err := q.WebhookSecretsAfter(ctx, queries.WebhookSecretsAfterParams{After: after, Upto: upto, Batch: batch})
			return sealedRows(rows, err, func(r queries.WebhookSecretsAfterRow) sealedRow { return sealedRow{id: r.ID, value: r.SecretSealed} })
		},
		set: func(ctx context.Context, q store.Querier, r sealedRow, sealed string, _ []byte) error {
			return q.SetWebhookSecret(ctx, queries.SetWebhookSecretParams{SecretSealed: sealed, ID: r.id})
		},
	}, {
		name:  "webhook_endpoints.previous_secret",
		since: "events.sql",
		aad:   seal.WebhookSecretAAD,
		last:  q.LastWebhookEndpointID,
		list: func(ctx context.Context, q store.Querier, after, upto string, batch int64) ([]sealedRow, error) {
			rows, err := q.WebhookPreviousSecretsAfter(ctx, queries.WebhookPreviousSecretsAfterParams{After: after, Upto: upto, Batch: batch})
			return sealedRows(rows, err, func(r queries.WebhookPreviousSecretsAfterRow) sealedRow {
				return sealedRow{id: r.ID, value: r.PreviousSecretSealed}
			})
		},
		set: func(ctx context.Context, q store.Querier, r sealedRow, sealed string, _ []byte) error {
			return q.SetWebhookPreviousSecret(ctx, queries.SetWebhookPreviousSecretParams{PreviousSecretSealed: new(sealed), ID: r.id})
		},
	}}
}

// sealBatch seals anew, under the newest key, the values of up to batch rows of col after
// the id after and up to upto: plain values (of a database written before encryption at rest) and values
// sealed under an older key; values already under the newest key are left as they are.
// It returns the last id read (after, when none), how many values it sealed, and whether
// the column has no rows past those read.
func (s *Keys) sealBatch(ctx context.Context, q store.Querier, col sealedColumn, after, upto string, batch int) (last string, n int, done bool, err error) {
	rows, err := col.list(ctx, q, after, upto, int64(batch))
	if err != nil {
		return after, 0, false, err
	}
	write := s.Ring.SealingID()
	for _, r := range rows {
		var plain []byte
		switch id, sealed := seal.SealedBy(r.value); {
		case !sealed:
			plain = []byte(r.value)
		case id == write:
			continue
		default:
			if plain, err = s.Ring.Open(r.value, col.aad(r.id)); err != nil {
				return after, n, false, fmt.Errorf("%s of %s: %w", col.name, r.id, err)
			}
		}
		err := col.set(ctx, q, r, s.Ring.Seal(plain, col.aad(r.id)), plain)
		clear(plain)
		if err != nil {
			return after, n, false, fmt.Errorf("%s of %s: %w", col.name, r.id, err)
		}
		n++
	}
	if len(rows) > 0 {
		after = rows[len(rows)-1].id
	}
	return after, n, len(rows) < batch, nil
}

// SealPlainValues is the Go part of migration sealed_values: in the migration's own
// transaction, it seals every value the migration left plain, and computes the blind
// index of every linked account number.
func (s *Keys) SealPlainValues(ctx context.Context, q store.Querier) error {
	for _, col := range s.sealedColumns(q) {
		if col.since != "" {
			continue
		}
		upto, err := col.last(ctx)
		if err != nil {
			return err
		}
		after, done := "", false
		for !done {
			if after, _, done, err = s.sealBatch(ctx, q, col, after, upto, defaultSealBatch); err != nil {
				return err
			}
		}
	}
	return nil
}

// defaultSealBatch is how many rows a rotation reseals in one transaction: a few
// milliseconds of writing, so that the requests a server writes meanwhile hardly wait.
const defaultSealBatch = 500

// SealingID returns the id of the data key the service seals new values under.
func (s *Keys) SealingID() string { return s.Ring.SealingID() }

// Unregistered returns, for a service opened read-only, the id of the first configured
// key when the database does not know that key yet (Open, not read-only, would have
// registered it as the key new values are sealed under), or "".
func (s *Keys) Unregistered() string { return s.unregistered }

// CreatedFile returns the key file Open created with a new data key, or "" when it
// created none.
func (s *Keys) CreatedFile() string { return s.createdFile }

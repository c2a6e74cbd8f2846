package payments

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// What the database keeps about data keys, and what Open, the one-time sealing of an older
// database and a key rotation do with it.

// keyError is a data key problem found at open: reported as such, not as a failed
// migration.
type keyError struct{ error }

func (e keyError) Unwrap() error { return e.error }

// setUpKeys makes the service's keyring and blind index. It runs in Open's migration
// transaction, so that two processes opening one new database agree on its first key.
// With no key given it reads the key file, creating it for a database that has no key
// yet. Each configured key the database knows must open its key check; a database whose
// values are sealed under none of the configured keys, or under a key not configured,
// is refused here rather than failing on a request. The newest configured key is
// registered when it is new: that is how a key rotation starts (idempotent: a key
// registered is known the next time). A read-only service creates no key file and
// registers nothing.
func (s *Service) setUpKeys(ctx context.Context, q store.Querier, path string, opts Options) error {
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

	keys := opts.DataKeys
	if len(keys) == 0 {
		file := opts.KeyFile
		if file == "" {
			file = DefaultKeyFile(path)
		}
		k, err := ReadKeyFile(file)
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist) && len(known) == 0 && !s.readOnly:
			k = NewDataKey()
			if err := WriteKeyFile(file, k); err != nil {
				return err
			}
			s.createdKeyFile = file
		case errors.Is(err, fs.ErrNotExist):
			return keyError{fmt.Errorf("%w: the key file %s does not exist, and this database's values are sealed under data key %s",
				ErrMissingDataKey, file, strings.Join(live, ", "))}
		default:
			return keyError{err}
		}
		keys = []DataKey{k}
	}
	ring, err := seal.NewKeyring(keys)
	if err != nil {
		return keyError{err}
	}

	write := ring.SealingID()
	anyKnown := false
	for i, id := range ring.IDs() {
		row, ok := knownByID[id]
		if !ok {
			if i == 0 {
				continue // a new key to seal with: registered below
			}
			return keyError{fmt.Errorf("%w: data key %s, given as an older key, is not a key of this database", ErrWrongDataKey, id)}
		}
		anyKnown = true
		if check, err := ring.Open(row.KeyCheck, keyCheckAAD(id)); err != nil || string(check) != keyCheckText {
			return keyError{fmt.Errorf("%w: data key %s does not open this database's check of that key", ErrWrongDataKey, id)}
		}
		if i == 0 && row.RetiredAt != nil {
			return keyError{fmt.Errorf("%w: data key %s was retired at %s; seal with this database's current key %s",
				ErrRetiredDataKey, id, *row.RetiredAt, strings.Join(live, ", "))}
		}
	}
	if _, ok := knownByID[write]; !ok {
		if len(known) > 0 && !anyKnown {
			return keyError{fmt.Errorf("%w (key id %s; its values are sealed under key id %s)",
				ErrWrongDataKey, write, strings.Join(live, ", "))}
		}
		if s.readOnly { // registers nothing: the service has the keys the database knows
			if ring, err = seal.NewKeyring(keys[1:]); err != nil {
				return keyError{err}
			}
			s.unregisteredKey, write = write, ring.SealingID()
		} else if err := q.AddDataKey(ctx, queries.AddDataKeyParams{
			KeyID:    write,
			KeyCheck: ring.Seal([]byte(keyCheckText), keyCheckAAD(write)),
			AddedAt:  formatTime(s.Now()),
		}); err != nil {
			return err
		}
	}
	for _, id := range live {
		if !ring.Has(id) {
			return keyError{fmt.Errorf("%w: values of this database are still sealed under data key %s "+
				"(a key rotation to %s is not finished): give that key too, as an older key", ErrMissingDataKey, id, write)}
		}
	}

	root := make([]byte, 32)
	sealedRoot, err := q.GetBlindIndexKey(ctx)
	switch {
	case errors.Is(err, sql.ErrNoRows) && s.readOnly:
		err = errors.New("the database has none yet")
	case errors.Is(err, sql.ErrNoRows):
		rand.Read(root) // never returns an error (crypto/rand, Go 1.24+)
		err = q.CreateBlindIndexKey(ctx, queries.CreateBlindIndexKeyParams{
			KeySealed: ring.Seal(root, blindIndexKeyAAD),
			CreatedAt: formatTime(s.Now()),
		})
	case err == nil:
		root, err = ring.Open(sealedRoot, blindIndexKeyAAD)
	}
	if err != nil {
		return fmt.Errorf("blind-index key: %w", err)
	}
	s.keys, s.index = ring, seal.NewBlindIndex(root)
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
	// (whose Go step, sealPlainValues, walks only the columns there were then: a later
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
func (s *Service) sealedColumns(q store.Querier) []sealedColumn {
	return []sealedColumn{{
		name: "platforms.secret",
		aad:  platformSecretAAD,
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
		aad:  bankAccountNumberAAD,
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
				AccountNumberIndex:  s.index.BankAccount(r.userID, r.routingNumber, string(plain)),
				ID:                  r.id,
			})
		},
	}, {
		name: "payee_banks.account_number",
		aad:  payeeBankNumberAAD,
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
		aad:  idempotencyOutcomeAAD,
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
		aad:   webhookSecretAAD,
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
		aad:   webhookSecretAAD,
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
func (s *Service) sealBatch(ctx context.Context, q store.Querier, col sealedColumn, after, upto string, batch int) (last string, n int, done bool, err error) {
	rows, err := col.list(ctx, q, after, upto, int64(batch))
	if err != nil {
		return after, 0, false, err
	}
	write := s.keys.SealingID()
	for _, r := range rows {
		var plain []byte
		switch id, sealed := seal.SealedBy(r.value); {
		case !sealed:
			plain = []byte(r.value)
		case id == write:
			continue
		default:
			if plain, err = s.keys.Open(r.value, col.aad(r.id)); err != nil {
				return after, n, false, fmt.Errorf("%s of %s: %w", col.name, r.id, err)
			}
		}
		err := col.set(ctx, q, r, s.keys.Seal(plain, col.aad(r.id)), plain)
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

// sealPlainValues is the Go part of migration sealed_values: in the migration's own
// transaction, it seals every value the migration left plain, and computes the blind
// index of every linked account number.
func (s *Service) sealPlainValues(ctx context.Context, q store.Querier) error {
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

// DataKeyID returns the id of the data key the service seals new values under.
func (s *Service) DataKeyID() string { return s.keys.SealingID() }

// UnregisteredDataKey returns, for a service opened with Options.ReadOnly, the id of the
// first of Options.DataKeys when the database does not know that key yet (Open, not
// read-only, would have registered it as the key new values are sealed under), or "".
func (s *Service) UnregisteredDataKey() string { return s.unregisteredKey }

// CreatedKeyFile returns the key file Open created with a new data key (see
// Options.KeyFile), or "" when it created none.
func (s *Service) CreatedKeyFile() string { return s.createdKeyFile }

package payments

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

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
// registered when it is new: that is how a key rotation starts.
func (s *Service) setUpKeys(ctx context.Context, q *queries.Queries, path string, opts Options) error {
	known, err := q.ListDataKeys(ctx)
	if err != nil {
		return err
	}
	var live []string // keys that may still seal values
	knownByID := map[string]queries.DataKey{}
	for _, k := range known {
		knownByID[k.KeyID] = k
		if !k.RetiredAt.Valid {
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
		case errors.Is(err, fs.ErrNotExist) && len(known) == 0:
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
	ring, err := newKeyring(keys)
	if err != nil {
		return keyError{err}
	}

	write := ring.writeID()
	anyKnown := false
	for i, k := range ring.keys {
		row, ok := knownByID[k.id]
		if !ok {
			if i == 0 {
				continue // a new key to seal with: registered below
			}
			return keyError{fmt.Errorf("%w: data key %s, given as an older key, is not a key of this database", ErrWrongDataKey, k.id)}
		}
		anyKnown = true
		if check, err := ring.open(row.KeyCheck, keyCheckAAD(k.id)); err != nil || string(check) != keyCheckText {
			return keyError{fmt.Errorf("%w: data key %s does not open this database's check of that key", ErrWrongDataKey, k.id)}
		}
		if i == 0 && row.RetiredAt.Valid {
			return keyError{fmt.Errorf("%w: data key %s was retired at %s; seal with this database's current key %s",
				ErrRetiredDataKey, k.id, row.RetiredAt.String, strings.Join(live, ", "))}
		}
	}
	if _, ok := knownByID[write]; !ok {
		if len(known) > 0 && !anyKnown {
			return keyError{fmt.Errorf("%w (key id %s; its values are sealed under key id %s)",
				ErrWrongDataKey, write, strings.Join(live, ", "))}
		}
		if err := q.AddDataKey(ctx, queries.AddDataKeyParams{
			KeyID:    write,
			KeyCheck: ring.seal([]byte(keyCheckText), keyCheckAAD(write)),
			AddedAt:  formatTime(s.Now()),
		}); err != nil {
			return err
		}
	}
	for _, id := range live {
		if ring.byID(id) == nil {
			return keyError{fmt.Errorf("%w: values of this database are still sealed under data key %s "+
				"(a key rotation to %s is not finished): give that key too, as an older key", ErrMissingDataKey, id, write)}
		}
	}

	root := make([]byte, 32)
	sealedRoot, err := q.GetBlindIndexKey(ctx)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		rand.Read(root) // never returns an error (crypto/rand, Go 1.24+)
		err = q.CreateBlindIndexKey(ctx, queries.CreateBlindIndexKeyParams{
			KeySealed: ring.seal(root, blindIndexKeyAAD),
			CreatedAt: formatTime(s.Now()),
		})
	case err == nil:
		root, err = ring.open(sealedRoot, blindIndexKeyAAD)
	}
	if err != nil {
		return fmt.Errorf("blind-index key: %w", err)
	}
	s.keys, s.index = ring, newBlindIndex(root)
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
	aad  func(id string) string
	last func(ctx context.Context) (string, error)
	list func(ctx context.Context, q *queries.Queries, after, upto string, batch int64) ([]sealedRow, error)
	// set stores the value sealed anew (and, for an account number, its blind index).
	set func(ctx context.Context, q *queries.Queries, r sealedRow, sealed string, plain []byte) error
}

// sealedColumns are the columns of sealed values; q reads where each walk ends.
func (s *Service) sealedColumns(q *queries.Queries) []sealedColumn {
	return []sealedColumn{{
		name: "platforms.secret",
		aad:  platformSecretAAD,
		last: q.LastPlatformID,
		list: func(ctx context.Context, q *queries.Queries, after, upto string, batch int64) ([]sealedRow, error) {
			rows, err := q.PlatformSecretsAfter(ctx, queries.PlatformSecretsAfterParams{After: after, Upto: upto, Batch: batch})
			out := make([]sealedRow, len(rows))
			for i, r := range rows {
				out[i] = sealedRow{id: r.ID, value: r.SecretSealed}
			}
			return out, err
		},
		set: func(ctx context.Context, q *queries.Queries, r sealedRow, sealed string, _ []byte) error {
			return q.SetPlatformSecret(ctx, queries.SetPlatformSecretParams{SecretSealed: sealed, ID: r.id})
		},
	}, {
		name: "bank_accounts.account_number",
		aad:  bankAccountNumberAAD,
		last: q.LastBankAccountID,
		list: func(ctx context.Context, q *queries.Queries, after, upto string, batch int64) ([]sealedRow, error) {
			rows, err := q.BankAccountNumbersAfter(ctx, queries.BankAccountNumbersAfterParams{After: after, Upto: upto, Batch: batch})
			out := make([]sealedRow, len(rows))
			for i, r := range rows {
				out[i] = sealedRow{id: r.ID, value: r.AccountNumberSealed, userID: r.UserID, routingNumber: r.RoutingNumber}
			}
			return out, err
		},
		set: func(ctx context.Context, q *queries.Queries, r sealedRow, sealed string, plain []byte) error {
			return q.SetBankAccountNumber(ctx, queries.SetBankAccountNumberParams{
				AccountNumberSealed: sealed,
				AccountNumberIndex:  s.index.bankAccount(r.userID, r.routingNumber, string(plain)),
				ID:                  r.id,
			})
		},
	}, {
		name: "payee_banks.account_number",
		aad:  payeeBankNumberAAD,
		last: q.LastPayeeBankID,
		list: func(ctx context.Context, q *queries.Queries, after, upto string, batch int64) ([]sealedRow, error) {
			rows, err := q.PayeeBankNumbersAfter(ctx, queries.PayeeBankNumbersAfterParams{After: after, Upto: upto, Batch: batch})
			out := make([]sealedRow, len(rows))
			for i, r := range rows {
				out[i] = sealedRow{id: r.ID, value: r.AccountNumberSealed}
			}
			return out, err
		},
		set: func(ctx context.Context, q *queries.Queries, r sealedRow, sealed string, _ []byte) error {
			return q.SetPayeeBankNumber(ctx, queries.SetPayeeBankNumberParams{AccountNumberSealed: sealed, ID: r.id})
		},
	}}
}

// sealBatch seals anew, under the newest key, the values of up to batch rows of col after
// the id after and up to upto: plain values (of a database written before encryption at rest) and values
// sealed under an older key; values already under the newest key are left as they are.
// It returns the last id read (after, when none), how many values it sealed, and whether
// the column has no rows past those read.
func (s *Service) sealBatch(ctx context.Context, q *queries.Queries, col sealedColumn, after, upto string, batch int) (last string, n int, done bool, err error) {
	rows, err := col.list(ctx, q, after, upto, int64(batch))
	if err != nil {
		return after, 0, false, err
	}
	write := s.keys.writeID()
	for _, r := range rows {
		var plain []byte
		switch id, sealed := sealedKeyID(r.value); {
		case !sealed:
			plain = []byte(r.value)
		case id == write:
			continue
		default:
			if plain, err = s.keys.open(r.value, col.aad(r.id)); err != nil {
				return after, n, false, fmt.Errorf("%s of %s: %w", col.name, r.id, err)
			}
		}
		err := col.set(ctx, q, r, s.keys.seal(plain, col.aad(r.id)), plain)
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
func (s *Service) sealPlainValues(ctx context.Context, q *queries.Queries) error {
	for _, col := range s.sealedColumns(q) {
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

// RotateOptions tunes RotateKeys.
type RotateOptions struct {
	// BatchSize is how many rows are resealed in one transaction; default 500.
	BatchSize int
	// Progress, when set, is called after each batch with the column walked (e.g.
	// "bank_accounts.account_number") and the number of values resealed so far.
	Progress func(column string, resealed int)
}

// Rotation is what RotateKeys did.
type Rotation struct {
	// KeyID is the key every value is now sealed under.
	KeyID string `json:"key_id"`
	// Resealed is how many values this run moved to it.
	Resealed int `json:"resealed"`
	// Retired are the keys this run retired: they seal nothing and open nothing any more.
	Retired []string `json:"retired"`
}

// rotationRounds bounds how many times RotateKeys walks the store: a value sealed under an
// older key after the walk passed it (by a process that seals with an older key) sends
// the walk round again.
const rotationRounds = 3

// RotateKeys reseals every value under the service's newest data key (the first of
// Options.DataKeys), in transactions of BatchSize rows, then retires the older keys. It
// can run while servers keep serving and writing, provided they were started with the
// newest key as well (first) and the older ones; it can be interrupted (cancel ctx) and
// run again, resuming where it stopped, because it reseals only what is not under the
// newest key yet. The values of older keys stay readable until the last transaction, which
// checks that no value is left under them and retires them, in one step.
func (s *Service) RotateKeys(ctx context.Context, opts RotateOptions) (Rotation, error) {
	batch := opts.BatchSize
	if batch <= 0 {
		batch = defaultSealBatch
	}
	out := Rotation{KeyID: s.keys.writeID(), Retired: []string{}}
	for range rotationRounds {
		for _, col := range s.sealedColumns(s.writeQ) {
			upto, err := col.last(ctx)
			if err != nil {
				return out, err
			}
			after, done := "", false
			for !done {
				if err := ctx.Err(); err != nil {
					return out, err
				}
				var n int
				err := s.write(ctx, func(q *queries.Queries) (err error) {
					after, n, done, err = s.sealBatch(ctx, q, col, after, upto, batch)
					return err
				})
				if err != nil {
					return out, err
				}
				out.Resealed += n
				if opts.Progress != nil {
					opts.Progress(col.name, out.Resealed)
				}
			}
		}
		retired, resealed, finished, err := s.finishRotation(ctx)
		if err != nil {
			return out, err
		}
		out.Resealed += resealed
		if finished {
			out.Retired = append(out.Retired, retired...)
			return out, nil
		}
	}
	return out, fmt.Errorf("payments: values are still being sealed under an older data key after %d rounds: "+
		"is a server running without the new key %s?", rotationRounds, out.KeyID)
}

// finishRotation, in one transaction, reseals the blind-index key (resealed is 1 when it
// did) and, when no value is left under another key, retires every other key.
func (s *Service) finishRotation(ctx context.Context) (retired []string, resealed int, finished bool, err error) {
	write := s.keys.writeID()
	err = s.write(ctx, func(q *queries.Queries) error {
		sealedRoot, err := q.GetBlindIndexKey(ctx)
		if err != nil {
			return err
		}
		if id, _ := sealedKeyID(sealedRoot); id != write {
			root, err := s.keys.open(sealedRoot, blindIndexKeyAAD)
			if err != nil {
				return fmt.Errorf("payments: blind-index key: %w", err)
			}
			err = q.SetBlindIndexKey(ctx, s.keys.seal(root, blindIndexKeyAAD))
			clear(root)
			if err != nil {
				return err
			}
			resealed = 1
		}
		counts, err := q.CountSealedByKey(ctx)
		if err != nil {
			return err
		}
		for _, c := range counts {
			if c.KeyID != write && c.N > 0 {
				return nil // not finished: walk again (the index key is resealed already)
			}
		}
		known, err := q.ListDataKeys(ctx)
		if err != nil {
			return err
		}
		for _, k := range known {
			if k.KeyID == write || k.RetiredAt.Valid {
				continue
			}
			if err := q.RetireDataKey(ctx, queries.RetireDataKeyParams{RetiredAt: nullTime(s.Now()), KeyID: k.KeyID}); err != nil {
				return err
			}
			retired = append(retired, k.KeyID)
		}
		finished = true
		return nil
	})
	if err != nil {
		return nil, 0, false, err
	}
	return retired, resealed, finished, nil
}

// DataKeyInfo describes a data key of the database.
type DataKeyInfo struct {
	KeyID     string     `json:"key_id"`
	AddedAt   time.Time  `json:"added_at"`
	RetiredAt *time.Time `json:"retired_at"`
	// Values is how many stored values are sealed under the key.
	Values int64 `json:"values"`
	// Configured: the service was given this key. Sealing: it seals new values.
	Configured bool `json:"configured"`
	Sealing    bool `json:"sealing"`
}

// DataKeys lists the database's data keys, oldest first, with how many values each seals:
// a rotation is finished when only the newest key seals values and the others are retired.
func (s *Service) DataKeys(ctx context.Context) ([]DataKeyInfo, error) {
	var out []DataKeyInfo
	err := s.read(ctx, func(q *queries.Queries) error {
		known, err := q.ListDataKeys(ctx)
		if err != nil {
			return err
		}
		counts, err := q.CountSealedByKey(ctx)
		if err != nil {
			return err
		}
		values := map[string]int64{}
		for _, c := range counts {
			values[c.KeyID] = c.N
		}
		for _, k := range known {
			out = append(out, DataKeyInfo{
				KeyID:      k.KeyID,
				AddedAt:    parseTime(k.AddedAt),
				RetiredAt:  parseNullTime(k.RetiredAt),
				Values:     values[k.KeyID],
				Configured: s.keys.byID(k.KeyID) != nil,
				Sealing:    k.KeyID == s.keys.writeID(),
			})
		}
		return nil
	})
	return out, err
}

// DataKeyID returns the id of the data key the service seals new values under.
func (s *Service) DataKeyID() string { return s.keys.writeID() }

// CreatedKeyFile returns the key file Open created with a new data key (see
// Options.KeyFile), or "" when it created none.
func (s *Service) CreatedKeyFile() string { return s.createdKeyFile }

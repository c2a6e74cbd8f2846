package datakeys

import (
	"context"
	"fmt"
	"time"

	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/stored"
	"github.com/platform-payments/payments/queries"
)

// Key rotation: every sealed value moved to the newest data key, the older keys retired;
// and the report of which key seals how many values.

// RotateOptions tunes Rotate.
type RotateOptions struct {
	// BatchSize is how many rows are resealed in one transaction; default 100.
	BatchSize int
	// Rate bounds how many rows are resealed a second, on average; 0: no bound. Whatever
	// the rate, each batch is followed by a pause at least as long as the batch took, so
	// that the writes of the servers beside never wait long for the database: on SQLite
	// the rotation's batch holds the file's one write lock.
	Rate float64
	// Progress, when set, is called after each batch with the column walked (e.g.
	// "bank_accounts.account_number") and the number of values resealed so far.
	Progress func(column string, resealed int)
}

// Rotation is what Rotate did.
type Rotation struct {
	// KeyID is the key every value is now sealed under.
	KeyID string `json:"key_id"`
	// Resealed is how many values this run moved to it.
	Resealed int `json:"resealed"`
	// Retired are the keys this run retired: they seal nothing and open nothing any more.
	Retired []string `json:"retired"`
}

// rotationRounds bounds how many times Rotate walks the store: a value sealed under an
// older key after the walk passed it (by a process that seals with an older key) sends
// the walk round again.
const rotationRounds = 3

// Rotate reseals every value under the service's newest data key (the first configured), in transactions of BatchSize rows, then retires the older keys. It
// can run while servers keep serving and writing, provided they were started with the
// newest key as well (first) and the older ones; it can be interrupted (cancel ctx) and
// run again, resuming where it stopped, because it reseals only what is not under the
// newest key yet. The values of older keys stay readable until the last transaction, which
// checks that no value is left under them and retires them, in one step.
func (s *Keys) Rotate(ctx context.Context, opts RotateOptions) (Rotation, error) {
	batch := opts.BatchSize
	if batch <= 0 {
		batch = defaultRotateBatch
	}
	out := Rotation{KeyID: s.Ring.SealingID(), Retired: []string{}}
	pace := newPacer(opts.Rate)
	for range rotationRounds {
		for _, col := range s.sealedColumns(s.cfg.Reads()) {
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
				var began time.Time // when the batch began: it held the database since
				from := after       // the same rows when the batch runs again
				err := s.retryUnavailable(ctx, func() error {
					return s.cfg.Write(ctx, func(ctx context.Context, q store.Querier) (err error) {
						began = time.Now()
						after, n, done, err = s.sealBatch(ctx, q, col, from, upto, batch)
						return err
					})
				})
				if err != nil {
					return out, err
				}
				out.Resealed += n
				if err := pace.wait(ctx, out.Resealed, time.Since(began)); err != nil {
					return out, err
				}
				if opts.Progress != nil {
					opts.Progress(col.name, out.Resealed)
				}
			}
		}
		var (
			retired  []string
			resealed int
			finished bool
		)
		err := s.retryUnavailable(ctx, func() (err error) {
			retired, resealed, finished, err = s.finishRotation(ctx)
			return err
		})
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

// defaultRotateBatch is how many rows a rotation reseals in one transaction by default:
// on SQLite about 5 ms of the file's write lock, which the servers' writes beside it
// wait out in their first few tries.
const defaultRotateBatch = 100

// pacer spaces a rotation's batches: after each, a pause as long as the batch held the
// database (from its first statement to its commit; not the wait for the database, which
// the servers' writes had), so that the servers' writes get it at least as long as the
// rotation had it; longer when needed to keep to rate rows a second since the start.
type pacer struct {
	rate  float64
	start time.Time
}

func newPacer(rate float64) *pacer { return &pacer{rate: rate, start: time.Now()} }

// wait pauses after a batch that held the database for held, done rows resealed so far.
func (p *pacer) wait(ctx context.Context, done int, held time.Duration) error {
	pause := held
	if p.rate > 0 {
		due := p.start.Add(time.Duration(float64(done) / p.rate * float64(time.Second)))
		pause = max(pause, time.Until(due))
	}
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// rotationUnavailableTries is how many times a rotation's write is tried while the
// database is out of reach (CodeUnavailable: on SQLite, the servers' writes held the file
// past its busy timeout), a second apart, before the rotation gives up.
const rotationUnavailableTries = 10

// retryUnavailable runs write until it succeeds, fails otherwise than CodeUnavailable, or
// has been tried rotationUnavailableTries times.
func (s *Keys) retryUnavailable(ctx context.Context, write func() error) error {
	for try := 1; ; try++ {
		err := write()
		if !s.cfg.Unavailable(err) || try == rotationUnavailableTries {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// finishRotation, in one transaction, reseals the blind-index key (resealed is 1 when it
// did) and, when no value is left under another key, retires every other key.
func (s *Keys) finishRotation(ctx context.Context) (retired []string, resealed int, finished bool, err error) {
	write := s.Ring.SealingID()
	err = s.cfg.Write(ctx, func(ctx context.Context, q store.Querier) error {
		sealedRoot, err := q.GetBlindIndexKey(ctx)
		if err != nil {
			return err
		}
		if id, _ := seal.SealedBy(sealedRoot); id != write {
			root, err := s.Ring.Open(sealedRoot, seal.BlindIndexKeyAAD)
			if err != nil {
				return fmt.Errorf("payments: blind-index key: %w", err)
			}
			err = q.SetBlindIndexKey(ctx, s.Ring.Seal(root, seal.BlindIndexKeyAAD))
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
			if k.KeyID == write || k.RetiredAt != nil {
				continue
			}
			if err := q.RetireDataKey(ctx, queries.RetireDataKeyParams{RetiredAt: new(stored.Time(s.cfg.Now())), KeyID: k.KeyID}); err != nil {
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

// Info describes a data key of the database.
type Info struct {
	KeyID     string     `json:"key_id"`
	AddedAt   time.Time  `json:"added_at"`
	RetiredAt *time.Time `json:"retired_at"`
	// Values is how many stored values are sealed under the key.
	Values int64 `json:"values"`
	// Configured: the service was given this key. Sealing: it seals new values.
	Configured bool `json:"configured"`
	Sealing    bool `json:"sealing"`
}

// List lists the database's data keys, oldest first, with how many values each seals:
// a rotation is finished when only the newest key seals values and the others are retired.
func (s *Keys) List(ctx context.Context) ([]Info, error) {
	var out []Info
	// One snapshot: the counts must be of the keys listed.
	err := s.cfg.Read(ctx, func(q store.Querier) error {
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
			added, err := stored.ParseTime(k.AddedAt)
			if err != nil {
				return err
			}
			retired, err := stored.ParseNullTime(k.RetiredAt)
			if err != nil {
				return err
			}
			out = append(out, Info{
				KeyID:      k.KeyID,
				AddedAt:    added,
				RetiredAt:  retired,
				Values:     values[k.KeyID],
				Configured: s.Ring.Has(k.KeyID),
				Sealing:    k.KeyID == s.Ring.SealingID(),
			})
		}
		return nil
	})
	return out, err
}

// Package outbox is the payments store's outbox of webhook deliveries, as a dispatcher
// (package dispatch) works it: events wait in the store as pending deliveries, written in
// the transaction of the change they tell of; a dispatcher claims the due ones for a
// lease, sends them, and records each attempt, which settles when the delivery is tried
// again, or that it succeeded or failed for good.
package outbox

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/stored"
	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/queries"
)

// Outbox is the deliveries of one payments service. It is safe for concurrent use.
type Outbox struct {
	write func(ctx context.Context, fn func(ctx context.Context, q store.Querier) error) error
	query func(ctx context.Context, fn func(q store.Querier) error) error
	now   func() time.Time
	open  func(sealed, aad string) ([]byte, error)
	// disabled tells of an endpoint its failures disabled (Config.Disabled); logDisabled
	// logs it once the write commits (LogDisabled).
	disabled    func(ctx context.Context, q store.Querier, endpointID, reason string) error
	logDisabled atomic.Pointer[func(endpointID, reason string)]

	// due is set when a write has added deliveries (MarkDue); once it commits, wake
	// signals the dispatcher of this process (DeliveriesDue).
	due  atomic.Bool
	wake chan struct{}

	// failing are the endpoints whose failures this process recorded last: a success
	// there ends their failing run even when the endpoint was not failing at its claim.
	failingMu sync.Mutex
	failing   map[string]bool
}

// Config is what an outbox uses of its service.
type Config struct {
	// Write runs fn as one of the service's write operations; Query runs fn's statements
	// outside a transaction.
	Write func(ctx context.Context, fn func(ctx context.Context, q store.Querier) error) error
	Query func(ctx context.Context, fn func(q store.Querier) error) error
	// Now is the service's clock, truncated to the stored precision.
	Now func() time.Time
	// Open opens an endpoint's sealed secret with the service's data keys.
	Open func(sealed, aad string) ([]byte, error)
	// Disabled, when set, runs in the transaction that disables an endpoint for its
	// failures (a 410, or DisableAfter of them): the service tells the platform so.
	Disabled func(ctx context.Context, q store.Querier, endpointID, reason string) error
}

// New returns the outbox of the service cfg describes.
func New(cfg Config) *Outbox {
	return &Outbox{write: cfg.Write, query: cfg.Query, now: cfg.Now, open: cfg.Open, disabled: cfg.Disabled, wake: make(chan struct{}, 1),
		failing: map[string]bool{}}
}

// MarkDue says that the write under way adds deliveries: once it commits (Committed),
// the dispatcher of this process is woken.
func (o *Outbox) MarkDue() { o.due.Store(true) }

// Committed wakes the dispatcher of this process when the write that just committed
// added deliveries.
func (o *Outbox) Committed() {
	if o.due.Load() && o.due.CompareAndSwap(true, false) {
		select {
		case o.wake <- struct{}{}:
		default: // a signal is waiting already
		}
	}
}

// DisableAfter is how long an endpoint may fail every attempt before it is disabled.
const DisableAfter = 5 * 24 * time.Hour

// maxResponseKept is how much of a receiver's answer the attempt log keeps.
const maxResponseKept = 1024

// Delivery is a delivery a dispatcher has claimed: an event to send to an endpoint.
type Delivery struct {
	ID         int64
	EventID    string
	EndpointID string
	URL        string
	Payload    []byte // the event, exactly as it is sent
	Attempt    int64  // the number of this attempt, 1 for the first
	failures   int64
	secrets    []webhook.Secret // the endpoint's live secrets, newest first
	failing    bool             // the endpoint's last attempts failed, when claimed
}

// Failures is how many attempts of the delivery failed since it last succeeded or was
// resent: the retry schedule's position.
func (d Delivery) Failures() int64 { return d.failures }

// Headers returns the Standard Webhooks headers of the delivery sent at now: webhook-id
// (the event id, the same on every attempt), webhook-timestamp and webhook-signature,
// with a signature under each of the endpoint's live secrets.
func (d Delivery) Headers(now time.Time) map[string][]string {
	return webhook.Headers(d.EventID, now, d.Payload, d.secrets...)
}

// ClaimDeliveries takes up to max due deliveries for lease, as ClaimFair does with no
// bound of its own per endpoint but max, and the circuit breaker's default.
func (o *Outbox) ClaimDeliveries(ctx context.Context, max int, lease time.Duration) ([]Delivery, error) {
	return o.ClaimFair(ctx, max, Fairness{PerEndpoint: max}, lease)
}

// Fairness bounds what one endpoint gets of a claim.
type Fairness struct {
	// PerEndpoint is how many deliveries to one endpoint may be held at once, by all the
	// dispatchers of the database.
	PerEndpoint int
	// BreakAfter is how many of a failing endpoint's deliveries may wait to be retried
	// before its circuit opens; default DefaultBreakAfter.
	BreakAfter int
}

// scanAhead is how many times as many due deliveries as it may take a claim ranks first.
const scanAhead = 4

// DefaultBreakAfter is Fairness.BreakAfter's default.
const DefaultBreakAfter = 3

// ClaimFair takes up to max due deliveries for lease: until the lease ends no other
// dispatcher, of this process or another sharing the database, takes them; when it ends
// before their attempts are recorded (the process died), they are due again. The
// deliveries due longest go first, within what f allows each endpoint: no more than
// f.PerEndpoint held at once, counting those that dispatchers hold already, so that one
// endpoint's backlog cannot fill a claim; and a failing endpoint (its last attempt
// failed) one. Once f.BreakAfter of a failing endpoint's deliveries wait to be retried,
// its circuit is open: its other deliveries wait, and only those retries go, each at its
// time and one at a time (the probes), until one succeeds and ends the failing run.
// Claims of dispatchers sharing a database run one after the other, so that the counts
// hold across them. Deliveries to an endpoint deleted or disabled since are settled as
// failed, not returned.
func (o *Outbox) ClaimFair(ctx context.Context, max int, f Fairness, lease time.Duration) ([]Delivery, error) {
	if f.BreakAfter <= 0 {
		f.BreakAfter = DefaultBreakAfter
	}
	var out []Delivery
	err := o.write(ctx, func(ctx context.Context, q store.Querier) error {
		out = out[:0]
		if err := q.SerializeClaims(ctx); err != nil {
			return err
		}
		now := o.now()
		params := queries.ClaimDeliveriesParams{
			LeaseUntil: new(stored.Time(now.Add(lease))), Now: stored.Time(now), Max: int64(max),
			PerEndpoint: int64(f.PerEndpoint), BreakAfter: int64(f.BreakAfter), Scan: int64(scanAhead * max),
		}
		// The deliveries due longest first: ranking them all by endpoint costs a sort of
		// every due delivery, and the first few times max mostly give max. When they
		// fall short (an endpoint at its bound fills them, or they are all there is),
		// the rest are ranked too.
		claimed, err := q.ClaimDeliveries(ctx, params)
		if err != nil {
			return err
		}
		if len(claimed) < max {
			params.Max, params.Scan = int64(max-len(claimed)), math.MaxInt64
			more, err := q.ClaimDeliveries(ctx, params)
			if err != nil {
				return err
			}
			claimed = append(claimed, more...)
		}
		endpoints := map[string]queries.WebhookEndpoint{}
		for _, c := range claimed {
			e, ok := endpoints[c.EndpointID]
			if !ok {
				if e, err = q.GetDeliveryEndpoint(ctx, c.EndpointID); err != nil {
					return err
				}
				endpoints[c.EndpointID] = e
			}
			if e.Status != "enabled" || e.DeletedAt != nil {
				if err := q.RecordDelivery(ctx, queries.RecordDeliveryParams{
					State: "failed", Attempts: c.Attempts, Failures: c.Failures, NextAttemptAt: stored.Time(now), ID: c.ID,
					ClaimedAttempts: c.Attempts,
				}); err != nil {
					return err
				}
				continue
			}
			secrets, err := o.endpointSecrets(e, now)
			if err != nil {
				return err
			}
			payload, err := q.GetEventPayload(ctx, c.EventID)
			if err != nil {
				return err
			}
			out = append(out, Delivery{
				ID: c.ID, EventID: c.EventID, EndpointID: c.EndpointID, URL: e.Url, Payload: []byte(payload),
				Attempt: c.Attempts + 1, failures: c.Failures, secrets: secrets, failing: e.FailingSince != nil,
			})
		}
		return nil
	})
	return out, err
}

// ReleaseClaims frees the deliveries claimed and not yet recorded, so that they are due
// at once. Only the one dispatcher of a database may call it, at its start (on SQLite,
// where one process serves a database file): the claims it frees are those of a process
// that died; on a database that dispatchers share, leases expire instead.
func (o *Outbox) ReleaseClaims(ctx context.Context) (int64, error) {
	var n int64
	err := o.write(ctx, func(ctx context.Context, q store.Querier) (err error) {
		n, err = q.ReleaseClaims(ctx)
		return err
	})
	return n, err
}

// ExtendClaims keeps the claims of deliveries whose attempts are under way for lease more:
// a dispatcher renews them while it sends, so that a lease can be short (and a dead
// dispatcher's claims soon free) however long an attempt may take.
func (o *Outbox) ExtendClaims(ctx context.Context, ids []int64, lease time.Duration) error {
	if len(ids) == 0 {
		return nil
	}
	until := new(stored.Time(o.now().Add(lease)))
	// In the order of their ids, as RecordAttempts locks them: the dispatcher renews the
	// claims it is recording, and two writes locking rows in different orders deadlock.
	ids = slices.Sorted(slices.Values(ids))
	return o.write(ctx, func(ctx context.Context, q store.Querier) error {
		for _, id := range ids {
			if err := q.ExtendClaim(ctx, queries.ExtendClaimParams{LeaseUntil: until, ID: id}); err != nil {
				return err
			}
		}
		return nil
	})
}

// endpointSecrets opens the endpoint's secret, and the previous one while it still signs.
func (o *Outbox) endpointSecrets(e queries.WebhookEndpoint, now time.Time) ([]webhook.Secret, error) {
	sealed := []string{e.SecretSealed}
	if e.PreviousSecretSealed != nil && e.PreviousUntil != nil && stored.Time(now) < *e.PreviousUntil {
		sealed = append(sealed, *e.PreviousSecretSealed)
	}
	var out []webhook.Secret
	for _, v := range sealed {
		plain, err := o.open(v, seal.WebhookSecretAAD(e.ID))
		if err != nil {
			return nil, err
		}
		secret, err := webhook.ParseSecret(string(plain))
		if err != nil {
			return nil, err
		}
		out = append(out, secret)
	}
	return out, nil
}

// AttemptResult is what came of sending a claimed delivery.
type AttemptResult struct {
	Delivery   Delivery
	At         time.Time     // when it was sent
	StatusCode int           // the receiver's status; 0 without an answer
	Error      string        // why it failed; "" on success
	Latency    time.Duration // how long it took
	Response   []byte        // the start of the receiver's answer
	Succeeded  bool          // a 2xx answer
	Gone       bool          // a 410 answer: the endpoint asks to be disabled
	RetryAfter time.Duration // the receiver's Retry-After, where it counts
}

// DeliveryPolicy is how failed deliveries are retried.
type DeliveryPolicy struct {
	// Schedule is the delays before the second, third, ... attempt, each jittered by ±20%
	// (a Retry-After may stretch one to twice its length); after the last, a delivery
	// has failed for good.
	Schedule []time.Duration
	// Rand returns a float64 in [0, 1) for the jitter; nil: math/rand/v2.
	Rand func() float64
}

// RecordAttempts records the attempts of claimed deliveries, as Record does.
func (o *Outbox) RecordAttempts(ctx context.Context, results []AttemptResult, policy DeliveryPolicy) error {
	_, err := o.Record(ctx, results, policy)
	return err
}

// Record records the attempts of claimed deliveries, in one transaction: each attempt in
// the event's log, and each delivery's next state: succeeded; due again after the
// schedule's next delay; or failed for good when the schedule is spent or the endpoint
// answered 410 Gone, which disables it, as failing every attempt for DisableAfter does.
// A failed attempt makes its endpoint failing until an attempt succeeds (ClaimFair says
// what a failing endpoint gets). Record returns the endpoints that failed, so that the
// dispatcher can give back the deliveries to them it holds and has not sent.
func (o *Outbox) Record(ctx context.Context, results []AttemptResult, policy DeliveryPolicy) ([]string, error) {
	schedule := webhook.Schedule(policy.Schedule)
	// In the order of the deliveries' ids, as ExtendClaims locks them.
	results = slices.SortedStableFunc(slices.Values(results), func(a, b AttemptResult) int {
		return cmp.Compare(a.Delivery.ID, b.Delivery.ID)
	})
	var disabled [][2]string // endpoint id, reason
	err := o.write(ctx, func(ctx context.Context, q store.Querier) error {
		disabled = disabled[:0]
		for _, r := range results {
			if err := o.recordAttempt(ctx, q, r, schedule, policy.Rand, &disabled); err != nil {
				return err
			}
		}
		return nil
	})
	if log := o.logDisabled.Load(); err == nil && log != nil {
		for _, d := range disabled {
			(*log)(d[0], d[1])
		}
	}
	var failed []string
	for _, r := range results {
		if !r.Succeeded && !slices.Contains(failed, r.Delivery.EndpointID) {
			failed = append(failed, r.Delivery.EndpointID)
		}
	}
	return failed, err
}

// LogDisabled sets the function told of each endpoint that RecordAttempts disabled for
// its failures, with why, once the change has committed: a dispatcher logs it.
func (o *Outbox) LogDisabled(log func(endpointID, reason string)) { o.logDisabled.Store(&log) }

// disable disables the endpoint for its failures, unless it is disabled already, and
// tells of it (Config.Disabled).
func (o *Outbox) disable(ctx context.Context, q store.Querier, endpointID, reason string, disabled *[][2]string) error {
	n, err := q.DisableFailingEndpoint(ctx, queries.DisableFailingEndpointParams{DisabledReason: &reason, ID: endpointID})
	if err != nil || n == 0 {
		return err
	}
	*disabled = append(*disabled, [2]string{endpointID, reason})
	if o.disabled == nil {
		return nil
	}
	return o.disabled(ctx, q, endpointID, reason)
}

func (o *Outbox) recordAttempt(ctx context.Context, q store.Querier, r AttemptResult, schedule webhook.Schedule, rnd func() float64, disabled *[][2]string) error {
	d, at := r.Delivery, stored.Time(r.At)
	var status *int64
	if r.StatusCode != 0 {
		status = new(int64(r.StatusCode))
	}
	var errText *string
	if r.Error != "" {
		errText = new(stored.Text(r.Error))
	}
	response := r.Response
	if len(response) > maxResponseKept {
		response = response[:maxResponseKept]
	}
	answer := stored.Text(string(response))
	next := queries.RecordDeliveryParams{ID: d.ID, Attempts: d.Attempt, Failures: d.failures + 1, NextAttemptAt: at,
		State: "failed", ClaimedAttempts: d.Attempt - 1}
	if r.Succeeded {
		// The success is kept in the delivery's row: for most deliveries the only
		// attempt, with one statement less.
		n, err := q.RecordSuccess(ctx, queries.RecordSuccessParams{
			ClaimedAttempts: d.Attempt - 1, Attempt: d.Attempt, SucceededAt: at, Status: int64(r.StatusCode),
			Latency: r.Latency.Milliseconds(), Answer: answer, ID: d.ID,
		})
		if err == nil && n == 0 { // it holds a success already: log this one as any attempt
			next.State, next.Failures = "succeeded", 0
			err = o.logAttempt(ctx, q, d, at, status, errText, r.Latency, answer, next)
		}
		if was := o.wasFailing(d.EndpointID); err != nil || !d.failing && !was {
			return err
		}
		return q.MarkEndpointSucceeding(ctx, d.EndpointID)
	}
	if err := o.logAttempt(ctx, q, d, at, status, errText, r.Latency, answer, queries.RecordDeliveryParams{}); err != nil {
		return err
	}
	switch {
	case r.Gone:
		if err := q.RecordDelivery(ctx, next); err != nil {
			return err
		}
		return o.disable(ctx, q, d.EndpointID, "The endpoint answered 410 Gone.", disabled)
	}
	if delay, ok := schedule.Delay(int(next.Failures), r.RetryAfter, rnd); ok {
		next.State, next.NextAttemptAt = "pending", stored.Time(r.At.Add(delay))
	}
	if err := q.RecordDelivery(ctx, next); err != nil {
		return err
	}
	since, err := q.MarkEndpointFailing(ctx, queries.MarkEndpointFailingParams{Now: at, ID: d.EndpointID})
	if err != nil {
		return err
	}
	o.markFailing(d.EndpointID)
	if started, err := stored.ParseTime(since); err == nil && r.At.Sub(started) >= DisableAfter {
		return o.disable(ctx, q, d.EndpointID, "Every attempt failed for 5 days.", disabled)
	}
	return nil
}

// markFailing notes that this process recorded a failure of the endpoint; wasFailing
// reports (and forgets) it.
func (o *Outbox) markFailing(endpointID string) {
	o.failingMu.Lock()
	defer o.failingMu.Unlock()
	o.failing[endpointID] = true
}

func (o *Outbox) wasFailing(endpointID string) bool {
	o.failingMu.Lock()
	defer o.failingMu.Unlock()
	was := o.failing[endpointID]
	delete(o.failing, endpointID)
	return was
}

// logAttempt adds the attempt to webhook_attempts and, when next names a delivery,
// settles the delivery so.
func (o *Outbox) logAttempt(ctx context.Context, q store.Querier, d Delivery, at string, status *int64, errText *string,
	latency time.Duration, answer string, next queries.RecordDeliveryParams) error {
	if err := q.CreateAttempt(ctx, queries.CreateAttemptParams{
		EventID: d.EventID, EndpointID: d.EndpointID, Attempt: d.Attempt, AttemptedAt: at,
		StatusCode: status, Error: errText, LatencyMs: latency.Milliseconds(), Response: answer,
	}); err != nil || next.ID == 0 {
		return err
	}
	return q.RecordDelivery(ctx, next)
}

// Read runs fn's statements outside a transaction, as the service's own reads do: the
// read-only queries of the console (package overview) reach the store this way.
func (o *Outbox) Read(ctx context.Context, fn func(q store.Querier) error) error {
	return o.query(ctx, fn)
}

// PendingDeliveries returns how many deliveries wait to be sent (or retried), and the
// time of the oldest event among them (zero when none wait).
func (o *Outbox) PendingDeliveries(ctx context.Context) (int64, time.Time, error) {
	var row queries.PendingDeliveriesRow
	err := o.query(ctx, func(q store.Querier) (err error) {
		row, err = q.PendingDeliveries(ctx)
		return err
	})
	if err != nil || row.Oldest == "" {
		return row.Pending, time.Time{}, err
	}
	oldest, err := stored.ParseTime(row.Oldest)
	return row.Pending, oldest, err
}

// pruneBatch is how many events one transaction of PruneEvents deletes.
const pruneBatch = 1000

// PruneEvents deletes the events created before before, with their deliveries and
// attempts, a batch at a time, and returns how many events it deleted.
func (o *Outbox) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		var n int64
		err := o.write(ctx, func(ctx context.Context, q store.Querier) (err error) {
			p := stored.Time(before)
			if _, err = q.PruneAttempts(ctx, queries.PruneAttemptsParams{Before: p, Batch: pruneBatch}); err != nil {
				return err
			}
			if _, err = q.PruneDeliveries(ctx, queries.PruneDeliveriesParams{Before: p, Batch: pruneBatch}); err != nil {
				return err
			}
			n, err = q.PruneEvents(ctx, queries.PruneEventsParams{Before: p, Batch: pruneBatch})
			return err
		})
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
}

// DeliveriesDue returns a channel that receives when a change has just committed events
// with deliveries, so that a dispatcher in this process can send them at once instead of
// at its next poll.
func (o *Outbox) DeliveriesDue() <-chan struct{} { return o.wake }

// PlatformEnvironment returns the environment a platform was created in ("sandbox" or
// "production"), so that what only a sandbox may receive (paymentsd webhook trigger's
// made-up changes) is refused to a production platform; found is false for an unknown
// platform.
func (o *Outbox) PlatformEnvironment(ctx context.Context, platformID string) (env string, found bool, err error) {
	err = o.query(ctx, func(q store.Querier) error {
		p, err := q.GetPlatform(ctx, platformID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		env, found = p.Environment, err == nil
		return err
	})
	return env, found, err
}

// OpenCircuits returns how many enabled endpoints have their circuits open: failing,
// with breakAfter or more deliveries waiting to be retried (see ClaimFair).
func (o *Outbox) OpenCircuits(ctx context.Context, breakAfter int) (int64, error) {
	if breakAfter <= 0 {
		breakAfter = DefaultBreakAfter
	}
	var n int64
	err := o.query(ctx, func(q store.Querier) (err error) {
		n, err = q.OpenCircuits(ctx, int64(breakAfter))
		return err
	})
	return n, err
}

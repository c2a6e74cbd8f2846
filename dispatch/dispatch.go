// Package dispatch sends the webhook deliveries of a payments service: at least once,
// one delivery per event and subscribed endpoint, signed by the Standard Webhooks scheme,
// retried on a schedule, never in the way of an API request (events wait in the store,
// written with the change they tell of; the dispatcher reads them after commit).
//
//	d := dispatch.New(svc, dispatch.Options{Allow: allowed})
//	go d.Run(ctx)
//
// Any number of dispatchers may share a PostgreSQL database: each claims due deliveries
// in batches for a lease (FOR UPDATE SKIP LOCKED), so a dispatcher killed mid-delivery
// leaves its claims to the others when the lease ends. A SQLite database has one
// dispatcher (Options.Exclusive), which frees at its start what a process that died had
// claimed.
package dispatch

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/outbox"
	"github.com/platform-payments/payments/internal/scrape"
	"github.com/platform-payments/payments/internal/version"
	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/internal/webhook/egress"
)

// Defaults of Options.
const (
	DefaultTimeout   = 15 * time.Second
	DefaultWorkers   = 32
	DefaultRetention = 30 * 24 * time.Hour
	DefaultPoll      = time.Second
	// DefaultPerEndpoint is how many deliveries to one endpoint are sent at once.
	DefaultPerEndpoint = 4
)

// DefaultSchedule is the retry schedule: the delays before the second to tenth attempt.
var DefaultSchedule = []time.Duration(webhook.DefaultSchedule)

// ParseSchedule reads a schedule written as "5s,5m,30m,2h" (a d suffix for whole days).
func ParseSchedule(text string) ([]time.Duration, error) {
	s, err := webhook.ParseSchedule(text)
	return []time.Duration(s), err
}

// FormatSchedule writes a schedule as ParseSchedule reads it.
func FormatSchedule(s []time.Duration) string { return webhook.Schedule(s).String() }

// Options configures a Dispatcher. The zero value is the defaults.
type Options struct {
	// Schedule is the delays before the second, third, ... attempt; default DefaultSchedule.
	Schedule []time.Duration
	// Timeout bounds one attempt, connecting to reading the answer; default 15s.
	Timeout time.Duration
	// Workers is how many deliveries are sent at once; default DefaultWorkers.
	Workers int
	// PerEndpoint is how many deliveries to one endpoint are sent at once, by this
	// dispatcher; default DefaultPerEndpoint. The deliveries queued behind this cap take
	// none of the others' room; a claim leaves one endpoint no more held, by all the
	// dispatchers of the database, than one dispatcher claims at most (8 per worker).
	PerEndpoint int
	// BreakAfter is how many of a failing endpoint's deliveries may wait to be retried
	// before its circuit opens (its other deliveries wait, and the retries go one at a
	// time, each at its time, until one succeeds); default 3.
	BreakAfter int
	// Retention is how long events and their attempts are kept; default 30 days.
	Retention time.Duration
	// Allow lists the address ranges deliveries may connect to although they are not
	// public; give the service the same list (payments.Options.WebhookAllow).
	Allow []netip.Prefix
	// Poll is how often the store is asked for due deliveries when nothing in this
	// process said that some are waiting; default 1s.
	Poll time.Duration
	// Exclusive says this is the only dispatcher of its database (SQLite): claims left
	// by a process that died are freed at once instead of when their lease ends.
	Exclusive bool
	// Logger receives what goes wrong with the store; default none.
	Logger *slog.Logger
	// Confined keeps deliveries to the Allow ranges alone: a URL whose host is not an
	// address in them (or localhost) fails without a name being resolved or a connection
	// made. Tests and scenarios set it, so that nothing they run reaches beyond the
	// machine whatever URL a script registers.
	Confined bool
}

// Dispatcher sends the due deliveries of a service.
type Dispatcher struct {
	svc    *payments.Service
	box    *outbox.Outbox
	opts   Options
	client sender
	policy outbox.DeliveryPolicy
	lease  time.Duration

	// held are the deliveries claimed and not yet recorded, whose claims the dispatcher
	// renews every lease/3 while their attempts are under way.
	heldMu sync.Mutex
	held   map[int64]struct{}
	log    *slog.Logger

	attempts *prometheus.CounterVec
	// pending reads the deliveries waiting for the metrics, keeping the last good figures.
	pending *scrape.Reading[pendingFigures]
}

// New returns a dispatcher of svc's deliveries.
func New(svc *payments.Service, opts Options) *Dispatcher {
	if opts.Schedule == nil {
		opts.Schedule = DefaultSchedule
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.PerEndpoint <= 0 {
		opts.PerEndpoint = DefaultPerEndpoint
	}
	if opts.BreakAfter <= 0 {
		opts.BreakAfter = outbox.DefaultBreakAfter
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	svc.Outbox().LogDisabled(func(endpointID, reason string) {
		log.Warn("webhooks: endpoint disabled", "endpoint", endpointID, "reason", reason)
	})
	d := &Dispatcher{
		svc:  svc,
		box:  svc.Outbox(),
		opts: opts,
		client: sender{
			client:    egress.NewClient(webhook.NewDialer(opts.Allow, opts.Timeout), opts.Timeout),
			userAgent: userAgent(version.Get().Version),
			confined:  opts.Confined,
			allow:     opts.Allow,
		},
		policy: outbox.DeliveryPolicy{Schedule: opts.Schedule},
		// Claims are short and renewed while held: a dispatcher that dies leaves its
		// claims to the others within seconds, however long the timeout.
		lease: lease,
		held:  map[int64]struct{}{},
		log:   log,
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payments_webhook_attempts_total",
			Help: "Webhook delivery attempts, by outcome: succeeded, retrying (failed, tried again later), failed (for good), gone (410: the endpoint is disabled).",
		}, []string{"outcome"}),
	}
	box, breakAfter := d.box, d.opts.BreakAfter
	d.pending = scrape.New(func(ctx context.Context) (pendingFigures, error) {
		n, oldest, err := box.PendingDeliveries(ctx)
		if err != nil {
			return pendingFigures{}, err
		}
		circuits, err := box.OpenCircuits(ctx, breakAfter)
		return pendingFigures{n, oldest, circuits}, err
	}, pendingTimeout)
	// Every outcome is shown from the start, at 0, rather than from its first attempt:
	// the counter is there to scrape and alert on before anything is sent.
	for _, o := range outcomes {
		d.attempts.WithLabelValues(o)
	}
	return d
}

// outcomes are the values of the attempts counter's outcome label.
var outcomes = []string{"succeeded", "retrying", "failed", "gone"}

// userAgent is the User-Agent of deliveries, paymentsd/VERSION, with the version as an
// HTTP token: "(devel)", a local build's, becomes "devel".
func userAgent(v string) string {
	v = strings.Trim(v, "()")
	if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) }) {
		v = "unknown"
	}
	return "paymentsd/" + v
}

// sender posts deliveries with the guarded client.
type sender struct {
	client    *http.Client
	userAgent string
	confined  bool
	allow     []netip.Prefix
}

// post sends the delivery with its signed headers, as JSON, naming the program.
func (s sender) post(ctx context.Context, d outbox.Delivery, now time.Time) egress.Attempt {
	if s.confined && !s.within(d.URL) {
		return egress.Attempt{Error: "address refused: deliveries are confined to the allowed ranges"}
	}
	h := d.Headers(now)
	h["Content-Type"] = []string{"application/json"}
	h["User-Agent"] = []string{s.userAgent}
	return egress.Post(ctx, s.client, d.URL, h, d.Payload, time.Now)
}

// within reports whether the URL's host is localhost or an address of the allowed ranges.
func (s sender) within(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	addr, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return false
	}
	for _, p := range s.allow {
		if p.Contains(addr.Unmap()) {
			return true
		}
	}
	return false
}

// Collectors returns the dispatcher's metrics: attempts by outcome, the deliveries
// waiting, the age of the oldest event among them, and the endpoints whose circuits are
// open. The figures of the deliveries and circuits are read from the database in the
// background (the first read starts here): a scrape waits 50 ms at most for its read, and
// otherwise reports the last good figures, with their age.
func (d *Dispatcher) Collectors() []prometheus.Collector {
	d.pending.Start()
	return []prometheus.Collector{d.attempts, pendingCollector{d.pending}}
}

// Run sends due deliveries until ctx is done, then waits for the attempts under way
// (each bounded by the timeout) and records them. It returns nil when ctx ends it.
func (d *Dispatcher) Run(ctx context.Context) error {
	if d.opts.Exclusive {
		if n, err := d.box.ReleaseClaims(ctx); err != nil {
			d.log.Error("webhooks: free the claims of a previous run", "err", err)
		} else if n > 0 {
			d.log.Info("webhooks: freed the claims of a previous run", "deliveries", n)
		}
	}
	// Up to capacity deliveries are claimed at once, more than the workers send at
	// once: under load one claim (a transaction) feeds the workers for a while, and the
	// claims queued for a worker are renewed as those being sent are.
	capacity := claimsPerWorker * d.opts.Workers
	// The workers take the claimed deliveries an endpoint at a time, in turn, no more
	// than PerEndpoint of one endpoint's at once.
	jobs := newLanes(d.opts.PerEndpoint)
	results := make(chan outbox.AttemptResult, capacity)
	// Attempts are sent with a context that outlives ctx by the timeout, so that a
	// shutdown lets those under way finish and be recorded.
	sendCtx, stopSending := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSending()
	var workers sync.WaitGroup
	for range d.opts.Workers {
		workers.Go(func() {
			for job, ok := jobs.next(); ok; job, ok = jobs.next() {
				r := d.send(sendCtx, job)
				jobs.done(job.EndpointID)
				results <- r
			}
		})
	}
	free := make(chan int, capacity) // recorded deliveries hand their slots back
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		d.record(results, free, jobs)
	}()

	stopRenewing := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		d.renew(stopRenewing)
	}()
	pruned := make(chan struct{})
	go func() { // at start, then hourly: never in the deliveries' way
		defer close(pruned)
		tick := time.NewTicker(time.Hour)
		defer tick.Stop()
		for d.prune(ctx); ; d.prune(ctx) {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	d.claimLoop(ctx, jobs, free, capacity)
	// The attempts under way end and are recorded; the deliveries claimed and not sent
	// are freed for the next dispatcher to take.
	left := jobs.close()
	workers.Wait()
	close(results)
	<-recorded
	d.putBack(left)
	close(stopRenewing)
	<-renewed
	<-pruned
	return nil
}

// claimLoop claims due deliveries while workers are free, and hands them to the workers.
func (d *Dispatcher) claimLoop(ctx context.Context, jobs *lanes, free <-chan int, capacity int) {
	// idle is the slots not holding a claimed delivery. A claim asks for those and for
	// the slots of deliveries queued behind their endpoint's cap (lanes.blocked): an
	// endpoint's backlog takes no more of the others' room than its cap.
	idle := capacity
	// behind says to ask for the blocked slots too; a claim that gets less than it asked
	// turns it off (the backlogs have all they may hold), new deliveries turn it on.
	behind := true
	// woken says that deliveries may have come due (a commit, the poll): claim whatever
	// is idle. Otherwise slots handed back are claimed once a quarter of them are: a
	// claim ranks every due delivery by endpoint, and a backlog of thousands makes that
	// worth doing in fewer, larger claims.
	woken := true
	poll := time.NewTimer(0)
	defer poll.Stop()
	for {
		asked := idle
		if behind {
			asked += jobs.blocked()
		}
		if asked > 0 && (woken || 4*idle >= capacity) {
			woken = false
			claimed, err := d.box.ClaimFair(ctx, asked, outbox.Fairness{
				PerEndpoint: capacity, BreakAfter: d.opts.BreakAfter,
			}, d.lease)
			if err != nil && ctx.Err() == nil {
				d.log.Error("webhooks: claim deliveries", "err", err)
			}
			d.hold(claimed)
			jobs.add(claimed)
			idle -= len(claimed)
			behind = behind && len(claimed) == asked
			switch {
			case len(claimed) == asked:
				continue
			case len(claimed) >= lingerAbove:
				// Events are coming in fast: let a few milliseconds' worth gather, so
				// that one claim takes many instead of a transaction each. (A few at a
				// time are claimed again at once: they are sent without the wait.)
				select {
				case <-ctx.Done():
					return
				case <-time.After(linger):
				}
				continue
			}
		}
		poll.Reset(d.opts.Poll)
		select {
		case <-ctx.Done():
			return
		case n := <-free:
			idle += n
		case <-d.box.DeliveriesDue():
			behind, woken = true, true
		case <-poll.C:
			behind, woken = true, true
		}
		for drained := false; !drained; { // take every slot already handed back
			select {
			case n := <-free:
				idle += n
			default:
				drained = true
			}
		}
	}
}

// record records attempts as they come, many to a transaction, and hands their slots
// back to the claim loop. The deliveries queued here to an endpoint that failed are given
// back, for the claims to hand out as they do a failing endpoint's.
func (d *Dispatcher) record(results <-chan outbox.AttemptResult, free chan<- int, jobs *lanes) {
	var batch []outbox.AttemptResult
	flush := func() {
		if len(batch) == 0 {
			return
		}
		// Recorded whatever became of the run's context: an attempt made is logged.
		failed, err := d.box.Record(context.Background(), batch, d.policy)
		if err != nil {
			d.log.Error("webhooks: record attempts", "err", err, "attempts", len(batch))
		}
		for _, r := range batch {
			d.attempts.WithLabelValues(outcome(r, d.policy.Schedule)).Inc()
		}
		d.release(batch)
		slots := len(batch)
		for _, e := range failed {
			back := jobs.drop(e)
			d.putBack(back)
			slots += len(back)
		}
		select {
		case free <- slots:
		default: // the claim loop has stopped
		}
		batch = batch[:0]
	}
	for r := range results {
		batch = append(batch, r)
		// Others finish meanwhile: record what a few milliseconds bring in one go.
		gather := time.After(linger)
		for more := true; more && len(batch) < maxRecordBatch; {
			select {
			case r, ok := <-results:
				if !ok {
					more = false
					break
				}
				batch = append(batch, r)
			case <-gather:
				more = false
			}
		}
		flush()
	}
	flush()
}

// lease is how long a claim holds unless renewed. The dispatcher renews the claims it
// holds every lease/3, so a claim ends this long after its dispatcher stopped renewing
// it (it died): then another takes the delivery.
const lease = 6 * time.Second

// linger is how long the dispatcher lets deliveries gather, to claim or record them in
// one transaction, when some are coming in: far below the latency it adds to nothing
// (an idle dispatcher claims at once), far above a transaction's cost.
const linger = 20 * time.Millisecond

// lingerAbove is how many deliveries one claim must take for the dispatcher to linger
// before the next: fewer, and it claims again at once.
const lingerAbove = 8

// claimsPerWorker is how many deliveries a dispatcher holds claimed for each worker.
const claimsPerWorker = 8

// maxRecordBatch bounds the attempts recorded in one transaction.
const maxRecordBatch = 256

// hold notes claimed deliveries as held; release, recorded ones as no longer.
func (d *Dispatcher) hold(claimed []outbox.Delivery) {
	d.heldMu.Lock()
	defer d.heldMu.Unlock()
	for _, c := range claimed {
		d.held[c.ID] = struct{}{}
	}
}

func (d *Dispatcher) release(recorded []outbox.AttemptResult) {
	d.heldMu.Lock()
	defer d.heldMu.Unlock()
	for _, r := range recorded {
		delete(d.held, r.Delivery.ID)
	}
}

// putBack frees deliveries claimed and not sent, for the next claim to take.
func (d *Dispatcher) putBack(ds []outbox.Delivery) {
	if len(ds) == 0 {
		return
	}
	ids := make([]int64, len(ds))
	d.heldMu.Lock()
	for i, j := range ds {
		ids[i] = j.ID
		delete(d.held, j.ID)
	}
	d.heldMu.Unlock()
	// A lease ending now; failing that, they are due again when their leases end.
	if err := d.box.ExtendClaims(context.Background(), ids, 0); err != nil {
		d.log.Error("webhooks: put back claimed deliveries", "err", err, "deliveries", len(ids))
	}
}

// renew extends the claims the dispatcher holds, every lease/3, until stop is closed.
func (d *Dispatcher) renew(stop <-chan struct{}) {
	tick := time.NewTicker(lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		d.heldMu.Lock()
		ids := make([]int64, 0, len(d.held))
		for id := range d.held {
			ids = append(ids, id)
		}
		d.heldMu.Unlock()
		if err := d.box.ExtendClaims(context.Background(), ids, lease); err != nil {
			d.log.Error("webhooks: renew claims", "err", err, "deliveries", len(ids))
		}
	}
}

// outcome names what an attempt came to, for the metrics.
func outcome(r outbox.AttemptResult, schedule []time.Duration) string {
	switch {
	case r.Succeeded:
		return "succeeded"
	case r.Gone:
		return "gone"
	case r.Delivery.Failures() >= int64(len(schedule)):
		return "failed"
	}
	return "retrying"
}

// send makes one attempt of a delivery.
func (d *Dispatcher) send(ctx context.Context, job outbox.Delivery) outbox.AttemptResult {
	now := d.svc.Now() // the service's clock, which its due times are of
	a := d.client.post(ctx, job, now)
	return outbox.AttemptResult{
		Delivery: job, At: now, StatusCode: a.StatusCode, Error: a.Error, Latency: a.Latency,
		Response: a.Response, Succeeded: a.Succeeded(), Gone: a.Gone(), RetryAfter: a.RetryAfter,
	}
}

// prune deletes the events older than the retention.
func (d *Dispatcher) prune(ctx context.Context) {
	n, err := d.box.PruneEvents(ctx, d.svc.Now().Add(-d.opts.Retention))
	switch {
	case err != nil && ctx.Err() == nil:
		d.log.Error("webhooks: prune events", "err", err)
	case n > 0:
		d.log.Info("webhooks: pruned events", "events", n, "older_than", d.opts.Retention.String())
	}
}

// pendingCollector reports the deliveries waiting, the age of the oldest and the open
// circuits, as last read from the database, and how old that reading is. Before the first
// good read, it reports none of them.
type pendingCollector struct {
	pending *scrape.Reading[pendingFigures]
}

// pendingFigures are what a read of the deliveries waiting found.
type pendingFigures struct {
	n        int64
	oldest   time.Time
	circuits int64
}

// pendingTimeout bounds a read of the deliveries waiting.
const pendingTimeout = 5 * time.Second

var (
	pendingDesc = prometheus.NewDesc("payments_webhook_deliveries_pending",
		"Webhook deliveries waiting to be sent or retried.", nil, nil)
	oldestDesc = prometheus.NewDesc("payments_webhook_oldest_pending_seconds",
		"Age of the oldest event with a delivery waiting; 0 when none waits.", nil, nil)
	pendingAgeDesc = prometheus.NewDesc("payments_webhook_pending_read_age_seconds",
		"Seconds since payments_webhook_deliveries_pending, payments_webhook_oldest_pending_seconds and payments_webhook_open_circuits were read from the database: while it cannot be read, they keep their last good figures and this grows.", nil, nil)
)

func (pendingCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pendingDesc
	ch <- oldestDesc
	ch <- pendingAgeDesc
	ch <- circuitsDesc
}

func (c pendingCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.pending.Get()
	if r.At.IsZero() {
		return // never read yet
	}
	age := 0.0
	if !r.Value.oldest.IsZero() {
		age = time.Since(r.Value.oldest).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(r.Value.n))
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age)
	ch <- prometheus.MustNewConstMetric(pendingAgeDesc, prometheus.GaugeValue, time.Since(r.At).Seconds())
	ch <- prometheus.MustNewConstMetric(circuitsDesc, prometheus.GaugeValue, float64(r.Value.circuits))
}

var circuitsDesc = prometheus.NewDesc("payments_webhook_open_circuits",
	"Enabled webhook endpoints whose circuit is open: failing, with enough deliveries waiting to be retried that only "+
		"those retries go, one at a time, until one succeeds.", nil, nil)

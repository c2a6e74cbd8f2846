package console

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/platform-payments/payments"
)

// SampleEvery is how often a Sampler reads its figures.
const SampleEvery = time.Minute

// keptSamples is how many samples a Sampler keeps: an hour's, and the one before.
const keptSamples = 61

// Sample is what a Sampler read at one time: counters since the process started.
type Sample struct {
	At           time.Time
	Requests     float64 // payments_http_requests_total, all series
	ClientErrors float64 // of them, 4xx
	ServerErrors float64 // of them, 5xx
	Commits      uint64  // payments_commit_batch_size's count: transactions committed
	CommittedOps float64 // its sum: operations they carried
}

// Sampler reads the figures /metrics exports once a minute (Run) and keeps the last
// hour's, for the operations page.
type Sampler struct {
	gather prometheus.Gatherer
	mu     sync.Mutex
	kept   []Sample
}

// NewSampler returns a sampler of g (the registry /metrics serves).
func NewSampler(g prometheus.Gatherer) *Sampler { return &Sampler{gather: g} }

// Run samples now and every SampleEvery until ctx is done.
func (s *Sampler) Run(ctx context.Context) {
	t := time.NewTicker(SampleEvery)
	defer t.Stop()
	for {
		s.SampleAt(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SampleAt reads the figures now and keeps them as at.
func (s *Sampler) SampleAt(at time.Time) {
	smp, err := s.read(at)
	if err != nil {
		return // a gatherer that fails leaves a gap in the page's table
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kept = append(s.kept, smp)
	if len(s.kept) > keptSamples {
		s.kept = append(s.kept[:0], s.kept[len(s.kept)-keptSamples:]...)
	}
}

// read gathers one sample.
func (s *Sampler) read(at time.Time) (Sample, error) {
	families, err := s.gather.Gather()
	smp := Sample{At: at}
	if err != nil {
		return smp, err
	}
	for _, f := range families {
		switch f.GetName() {
		case "payments_http_requests_total":
			for _, m := range f.GetMetric() {
				v := m.GetCounter().GetValue()
				smp.Requests += v
				switch code := label(m, "code"); {
				case len(code) == 3 && code[0] == '4':
					smp.ClientErrors += v
				case len(code) == 3 && code[0] == '5':
					smp.ServerErrors += v
				}
			}
		case "payments_commit_batch_size":
			for _, m := range f.GetMetric() {
				smp.Commits += m.GetHistogram().GetSampleCount()
				smp.CommittedOps += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return smp, nil
}

// label returns the value of the metric's label name.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// minute is one minute of the operations page: the change between two samples.
type minute struct {
	At                                   time.Time
	Requests, ClientErrors, ServerErrors int64
	Commits                              int64
	MeanBatch                            string
}

// minutes returns the change over each minute between the kept samples, newest first.
func (s *Sampler) minutes() []minute {
	s.mu.Lock()
	kept := append([]Sample(nil), s.kept...)
	s.mu.Unlock()
	var out []minute
	for i := len(kept) - 1; i > 0; i-- {
		a, b := kept[i-1], kept[i]
		m := minute{At: b.At, Requests: int64(b.Requests - a.Requests), ClientErrors: int64(b.ClientErrors - a.ClientErrors),
			ServerErrors: int64(b.ServerErrors - a.ServerErrors), Commits: int64(b.Commits - a.Commits), MeanBatch: "—"} // #nosec G115 -- counts
		if m.Commits > 0 {
			m.MeanBatch = strconv.FormatFloat((b.CommittedOps-a.CommittedOps)/float64(m.Commits), 'f', 2, 64)
		}
		out = append(out, m)
	}
	return out
}

// operationsView is the operations page.
type operationsView struct {
	Sampling      bool
	Minutes       []minute
	Pending       int64
	Oldest        time.Time
	Commits       int64
	CommittedOps  int64
	Batches       []batchRow
	Pools         []poolRow
	SampleMinutes int
}

type batchRow struct {
	UpTo  string
	Count int64
}

type poolRow struct {
	Name                string
	Open, InUse, Idle   int
	MaxOpen             int
	WaitCount           int64
	WaitDurationSeconds string
}

// operationsPage shows requests and errors by minute over the last hour (from the
// sampler), the commit batches and pools (Stats, which /metrics exports) and the pending
// deliveries.
func (c *Console) operationsPage(r *http.Request, v *view) (string, any, error) {
	out := operationsView{Sampling: c.samples != nil, SampleMinutes: int(SampleEvery / time.Minute)}
	if c.samples != nil {
		out.Minutes = c.samples.minutes()
	}
	var err error
	if out.Pending, out.Oldest, err = c.svc.Outbox().PendingDeliveries(r.Context()); err != nil {
		return "", nil, err
	}
	st := c.svc.Stats()
	out.Commits, out.CommittedOps = st.Commits, st.CommittedOps
	for i, bound := range payments.CommitBatchBounds() {
		if i < len(st.CommitBatches) && st.CommitBatches[i] > 0 {
			out.Batches = append(out.Batches, batchRow{UpTo: strconv.Itoa(bound), Count: st.CommitBatches[i]})
		}
	}
	for name, p := range st.Pools {
		out.Pools = append(out.Pools, poolRow{Name: name, Open: p.OpenConnections, InUse: p.InUse, Idle: p.Idle,
			MaxOpen: p.MaxOpenConnections, WaitCount: p.WaitCount, WaitDurationSeconds: strconv.FormatFloat(p.WaitDuration.Seconds(), 'f', 3, 64)})
	}
	slices.SortFunc(out.Pools, func(a, b poolRow) int { return strings.Compare(a.Name, b.Name) })
	v.Title = "Operations"
	return "operations", out, nil
}

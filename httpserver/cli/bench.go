package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/platform-payments/payments"
)

var benchCommand = &command{
	name:    "bench",
	summary: "Drive a running server with signed requests and print requests a second and latency percentiles.",
	usage:   "-url URL -platform ID -secret S [-op create|get|list] [-c 50] [-d 10s] [-baseline [-baseline-dir DIR]]",
	details: `-op create sends Create User with a new email each time; get creates one user, then
reads it again and again (Get User); list reads the first page of List Users. -c clients
send one request after another for -d. The line printed gives the requests a second, the
median, 99th percentile and slowest latency, and the count of each status (a 429 means a
rate limit of the server is reached: serve -rate-limit 0 turns it off). -baseline first
measures the machine's limit to compare with, in the same run: for get and list, a bare
net/http server answering a small JSON body, started in this process on a free port and sent
requests the same way; for create, one SQLite writer committing durable transactions of
three rows (WAL, synchronous=FULL, as the store writes a user, a wallet and settings) one
after another, in a temporary file in -baseline-dir (the server's disk, for a fair
comparison; the current directory by default).`,
	run: runBench,
}

func runBench(ctx context.Context, inv *invocation, args []string) error {
	fs := inv.flagSet()
	base := fs.String("url", "", "the server's base `URL`, scheme://host:port (required)")
	platformID := fs.String("platform", "", "sign as the platform with this `ID` (required)")
	secret := fs.String("secret", "", "the platform's signing `SECRET` (required)")
	op := fs.String("op", "get", "the operation to send: `create`, get or list")
	clients := fs.Int("c", 50, "send from `N` clients at once")
	duration := fs.Duration("d", 10*time.Second, "send for `DURATION`")
	baseline := fs.Bool("baseline", false, "measure the machine's limit first: a bare net/http server, or for create a raw SQLite writer")
	baselineDir := fs.String("baseline-dir", ".", "write the raw SQLite writer's temporary file in `DIR`")
	if err := inv.parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	switch {
	case *base == "" || *platformID == "" || *secret == "":
		return usagef("-url, -platform and -secret are required")
	case *clients < 1 || *duration <= 0:
		return usagef("-c must be at least 1 and -d positive")
	}
	server, err := parseBaseURL(*base)
	if err != nil {
		return err
	}
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: *clients, DisableCompression: true},
		Timeout:   time.Minute,
	}
	b := &bencher{client: client, url: server.String(), platform: *platformID, secret: *secret, run: fmt.Sprint(time.Now().UnixNano())}
	next, err := b.requests(ctx, *op)
	if err != nil {
		return err
	}
	if *baseline {
		var res benchResult
		var name, what string
		if *op == "create" {
			name, what = "raw SQLite writer", "the raw writer's transactions a second"
			if res, err = rawWriter(ctx, *baselineDir, *duration); err != nil {
				return err
			}
		} else {
			addr, stop, err := bareServer()
			if err != nil {
				return err
			}
			bare := func(int) (*http.Request, error) { return http.NewRequest(http.MethodGet, "http://"+addr+"/", nil) }
			res = measure(ctx, client, bare, *clients, *duration)
			if err := stop(); err != nil {
				return err
			}
			name, what = "bare net/http", "the bare server's requests a second"
		}
		fmt.Fprintln(inv.stdout, res.line(name))
		defer func(base benchResult) {
			if base.perSecond > 0 {
				fmt.Fprintf(inv.stdout, "%s: %.2f of %s\n", *op, b.last.perSecond/base.perSecond, what)
			}
		}(res)
	}
	b.last = measure(ctx, client, next, *clients, *duration)
	fmt.Fprintln(inv.stdout, b.last.line(*op))
	return nil
}

// bencher makes the signed requests of one operation.
type bencher struct {
	client                *http.Client
	url, platform, secret string
	run                   string // tells this run's emails from another's
	last                  benchResult
	created               atomic.Int64
}

func (b *bencher) signed(method, target string, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(method, b.url+target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set(payments.HeaderPlatformID, b.platform)
	req.Header.Set(payments.HeaderSignature, payments.Sign(b.secret, method, target, body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func (b *bencher) createBody() []byte {
	n := b.created.Add(1)
	return fmt.Appendf(nil, `{"name":"Bench User","email":"bench-%s-%d@example.com"}`, b.run, n)
}

// requests returns the request maker of op.
func (b *bencher) requests(ctx context.Context, op string) (func(int) (*http.Request, error), error) {
	const create = "/api/platform/users/create"
	switch op {
	case "create":
		return func(int) (*http.Request, error) { return b.signed(http.MethodPost, create, b.createBody()) }, nil
	case "get":
		req, err := b.signed(http.MethodPost, create, b.createBody())
		if err != nil {
			return nil, err
		}
		resp, err := b.client.Do(req.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var created struct {
			Data struct {
				UserID string `json:"user_id"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("creating the user to read: HTTP %d %v", resp.StatusCode, err)
		}
		target := "/api/platform/users/get/" + created.Data.UserID
		return func(int) (*http.Request, error) { return b.signed(http.MethodGet, target, nil) }, nil
	case "list":
		body := []byte(`{"rows_per_page":10,"page_no":1}`)
		return func(int) (*http.Request, error) {
			return b.signed(http.MethodPost, "/api/platform/users/list", body)
		}, nil
	}
	return nil, usagef("-op %q: want create, get or list", op)
}

type benchResult struct {
	unit              string // what was counted: requests (the default) or transactions
	requests          int
	perSecond         float64
	p50, p99, slowest time.Duration
	statuses          map[int]int
	errors            int
}

func (r benchResult) line(name string) string {
	var st []string
	for _, code := range slices.Sorted(func(yield func(int) bool) {
		for c := range r.statuses {
			if !yield(c) {
				return
			}
		}
	}) {
		st = append(st, fmt.Sprintf("%d: %d", code, r.statuses[code]))
	}
	if r.errors > 0 {
		st = append(st, fmt.Sprintf("errors: %d", r.errors))
	}
	unit := cmp.Or(r.unit, "requests")
	line := fmt.Sprintf("%s: %.0f %s/s, p50 %v, p99 %v, slowest %v, %d %s", name, r.perSecond, unit,
		r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.slowest.Round(10*time.Microsecond),
		r.requests, unit)
	if len(st) > 0 {
		line += " (" + strings.Join(st, ", ") + ")"
	}
	return line
}

// measure sends requests from clients goroutines, one after another each, for d.
func measure(ctx context.Context, client *http.Client, next func(int) (*http.Request, error), clients int, d time.Duration) benchResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		res       = benchResult{statuses: map[int]int{}}
		wg        sync.WaitGroup
	)
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			statuses, errs := map[int]int{}, 0
			for ctx.Err() == nil {
				req, err := next(c)
				if err != nil {
					errs++
					continue
				}
				t := time.Now()
				resp, err := client.Do(req.WithContext(ctx))
				if err != nil {
					if ctx.Err() == nil {
						errs++
					}
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				if cerr := resp.Body.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					errs++
					continue
				}
				mine = append(mine, time.Since(t))
				statuses[resp.StatusCode]++
			}
			mu.Lock()
			defer mu.Unlock()
			latencies = append(latencies, mine...)
			for code, n := range statuses {
				res.statuses[code] += n
			}
			res.errors += errs
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(latencies)
	res.requests = len(latencies)
	if res.requests > 0 {
		res.perSecond = float64(res.requests) / elapsed.Seconds()
		res.p50 = latencies[len(latencies)/2]
		res.p99 = latencies[len(latencies)*99/100]
		res.slowest = latencies[len(latencies)-1]
	}
	return res
}

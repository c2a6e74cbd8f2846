package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/command"
)

var benchCommand = &command.Command{
	Name:    "bench",
	Summary: "Drive a running server with signed requests and print requests a second and latency percentiles.",
	Usage:   "-url URL -platform ID -secret S [-op OP] [fixture flags] [-c 50] [-d 10s] [-baseline [-baseline-dir DIR | -baseline-db URL]]",
	Details: `-op names the endpoint to drive (get unless given); -c clients send one request after
another for -d. Every request of a write op is a real change that answers 200 (never the same
change again, a 404 or a 409); a read op reads the same object again and again. What an op
needs is made through the API before the clock starts, or, where the API has no route to make
it, given by a fixture flag (made with the administration commands):

  op                 endpoint              each request                           fixture flags
  create             Create User           a user with a new email                -
  create-payee       Create Payee          a payee with a new email, user-API     -api-key -api-secret
  update-payee       Update Payee          renames a payee made first: a new name -api-key -api-secret -user
  add-account        Add Bank Account      links a new account number to a user   -
                                           made first (is_default false)
  delete-card        Delete Card           deletes the next card of -cards        -cards
  add-payee-bank     Add Payee Bank        a bank (IN) with a new account number  -api-key -api-secret -user
                                           for a payee made first
  delete-payee-bank  Delete Payee Bank     deletes the next payee bank made first -api-key -api-secret -user
                                                                                  [-banks N]
  get                Get User              reads a user made first                -
  list               List Users            reads the first page (10 users)        -
  get-account        Get Bank Account      reads the account -account             -account
  list-addresses     List Payee Addresses  reads -user's payee addresses          -user
  get-address        Get Payee Address     reads the address -address             -address
  rules              Get Payee Rules       reads -country's rules for -payout     [-country IN -payout INR]
  rates              Get Exchange Rates    reads the rates of -payout             [-payout INR]

create-payee sends only the user-API key (-platform and -secret are not needed); the payee
ops make their payee with that key, and -user is the key's user, whose id their paths carry
(paymentsd apikey create -user ID makes the key). -account is an account of an
identity-verified user (paymentsd user verify), else Get Bank Account answers 403. -cards FILE
has one card a line, USER_ID/CARD_ID (paymentsd card add); each card is deleted once, in the
order of the file, whichever client comes first. delete-payee-bank's banks are added by the -c
clients before the clock starts, for twice -d (-banks N: N of them instead). -address is
USER_ID/ADDRESS_ID (paymentsd address add). rules and rates need no flag: rules ship with the
database, and rates are set with paymentsd rates set. Fixture flags an op does not use are
ignored, so one set of flags serves every op.

When no card or payee bank is left, each client stops as it finds none (nothing is sent that
would answer 404), and a line after the figures says when they ran out: the figures are of
the requests sent until the last client stopped. Before the clock starts, each read is sent
once, and delete-card deletes the file's first card: bench stops with exit status 1 unless the
answer is a 200 (for list-addresses and rates, with a list that is not empty).

The line printed gives the requests a second, the median, 99th percentile and slowest
latency, and the count of each status (a 429 means a rate limit of the server is reached:
serve -rate-limit 0 turns it off). -baseline first measures the machine's limit to compare
with, in the same run: for a read, a bare net/http server answering a small JSON body,
started in this process on a free port and sent requests the same way; for a write, one
SQLite writer committing durable transactions of three rows (WAL, synchronous=FULL, as the
store writes a user, a wallet and settings) one after another, in a temporary file in
-baseline-dir (the server's disk, for a fair comparison; the current directory by default).
The server's build does not matter: bench speaks only the API, so it compares builds.

A server on PostgreSQL is compared with PostgreSQL instead: -baseline-db names its
database (default $PAYMENTS_DB, serve's -db, when it is a postgres:// URL), and a write's
baseline is -c writers on it, through a pool of -c connections, each committing a
transaction of three rows (BEGIN, three INSERTs, COMMIT) after another, with the
database's own fsync and synchronous_commit (a note on stderr says when these make commits
not durable). Their tables are in a schema of their own, paymentsd_bench_ and random hex
digits, dropped afterwards, also when bench is interrupted (SIGINT or SIGTERM; a second
one ends it at once): only a bench killed otherwise leaves it behind. The URL's password
is never printed. -baseline-db without -baseline, or not a postgres:// URL, is a usage
error; a read's baseline is the bare server whatever -baseline-db says.`,
	Run: runBench,
}

func runBench(ctx context.Context, x *command.Invocation, args []string) error {
	fs := x.FlagSet()
	base := fs.String("url", "", "the server's base `URL`, scheme://host:port (required)")
	platformID := fs.String("platform", "", "sign as the platform with this `ID` (required but for create-payee)")
	secret := fs.String("secret", "", "the platform's signing `SECRET` (required but for create-payee)")
	opName := fs.String("op", "get", "the operation to send: `OP`, one of "+strings.Join(benchOpNames(), ", "))
	clients := fs.Int("c", 50, "send from `N` clients at once")
	duration := fs.Duration("d", 10*time.Second, "send for `DURATION`")
	baseline := fs.Bool("baseline", false, "measure the machine's limit first: a bare net/http server, or for a write raw writers (SQLite's, or PostgreSQL's with -baseline-db)")
	baselineDir := fs.String("baseline-dir", ".", "write the raw SQLite writer's temporary file in `DIR`")
	baselineDB := fs.String("baseline-db", "", "for a write, measure raw writers on the server's PostgreSQL database `URL` "+
		"(postgres://…) instead of the SQLite writer; default $"+envDB+" when it is such a URL")
	var fix benchFixtures
	fs.StringVar(&fix.apiKey, "api-key", "", "the user-API `KEY` of -user (create-payee, update-payee, add-payee-bank, delete-payee-bank)")
	fs.StringVar(&fix.apiSecret, "api-secret", "", "the `SECRET` of -api-key")
	fs.StringVar(&fix.user, "user", "", "the `USER_ID` of -api-key's user; for list-addresses, the user whose payee addresses are read")
	fs.StringVar(&fix.account, "account", "", "get-account reads the bank account `ACCOUNT_ID`, of an identity-verified user")
	fs.StringVar(&fix.cards, "cards", "", "delete-card deletes the cards listed in `FILE`, one USER_ID/CARD_ID a line")
	fs.StringVar(&fix.address, "address", "", "get-address reads the payee address `USER_ID/ADDRESS_ID`")
	fs.StringVar(&fix.country, "country", "IN", "rules reads the payee rules of the destination country `CODE` (ISO 3166 alpha-2)")
	fs.StringVar(&fix.payout, "payout", "INR", "rules and rates read for the payout currency `CODE` (ISO 4217)")
	fs.IntVar(&fix.banks, "banks", 0, "delete-payee-bank adds `N` payee banks before the clock starts (default: as many as the clients add in twice -d)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := command.NoArgs(fs); err != nil {
		return err
	}
	op, ok := lookupBenchOp(*opName)
	switch {
	case *base == "":
		return command.Usagef("-url is required")
	case !ok:
		return command.Usagef("-op %q: want one of %s", *opName, strings.Join(benchOpNames(), ", "))
	case *clients < 1 || *duration <= 0:
		return command.Usagef("-c must be at least 1 and -d positive")
	case fix.banks < 0:
		return command.Usagef("-banks must not be negative")
	}
	pgDSN, err := baselineDatabase(*baseline, op.write, *baselineDB)
	if err != nil {
		return err
	}
	if missing := op.missing(fs); len(missing) > 0 {
		return command.Usagef("-op %s needs %s", op.name, andList(missing))
	}
	server, err := parseBaseURL(*base)
	if err != nil {
		return err
	}
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: *clients, DisableCompression: true},
		Timeout:   time.Minute,
	}
	b := &bencher{
		client: client, url: server.String(), platform: *platformID, secret: *secret, fix: fix,
		clients: *clients, duration: *duration, run: fmt.Sprint(time.Now().UnixNano()),
	}
	next, err := op.setup(b, ctx)
	if err != nil {
		return err
	}
	if *baseline {
		var res benchResult
		var name, what string
		switch {
		case op.write && pgDSN != "":
			name, what = fmt.Sprintf("raw PostgreSQL writers (%d)", *clients), "the raw writers' transactions a second"
			if res, err = pgBaseline(ctx, x.Stderr, pgDSN, *clients, *duration); err != nil {
				return err
			}
		case op.write:
			name, what = "raw SQLite writer", "the raw writer's transactions a second"
			if res, err = rawWriter(ctx, *baselineDir, *duration); err != nil {
				return err
			}
		default:
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
		fmt.Fprintln(x.Stdout, res.line(name))
		defer func(base benchResult) {
			if base.perSecond > 0 {
				fmt.Fprintf(x.Stdout, "%s: %.2f of %s\n", op.name, b.last.perSecond/base.perSecond, what)
			}
		}(res)
	}
	b.last = measure(ctx, client, next, *clients, *duration)
	fmt.Fprintln(x.Stdout, b.last.line(op.name))
	if r := b.last; r.ranOut > 0 {
		fmt.Fprintf(x.Stdout, "%s: ran out of %s %v into the %v run; each client stopped as it found none left, so the figures are of the %v until the last stopped (%s)\n",
			op.name, op.usesUp, r.ranOut.Round(time.Millisecond), *duration, r.elapsed.Round(time.Millisecond), op.more)
	}
	return nil
}

// baselineDatabase returns the PostgreSQL database whose raw writers -baseline measures
// for a write: -baseline-db (given only with -baseline), else $PAYMENTS_DB when it is a
// postgres:// URL and -baseline measures a write, else "" (the SQLite writer).
func baselineDatabase(baseline, write bool, flag string) (string, error) {
	dsn, from := flag, "-baseline-db"
	switch {
	case flag != "" && !baseline:
		return "", command.Usagef("-baseline-db needs -baseline")
	case flag != "" && !payments.IsPostgres(flag):
		return "", command.Usagef("-baseline-db: want a postgres:// or postgresql:// URL (a server on SQLite is compared with the SQLite writer of -baseline-dir)")
	case flag == "" && baseline && write && payments.IsPostgres(getenv(envDB)):
		dsn, from = getenv(envDB), "$"+envDB
	}
	if _, err := url.Parse(dsn); err != nil { // its message would show the password
		return "", command.Usagef("%s: not a valid URL", from)
	}
	return dsn, nil
}

type benchResult struct {
	unit              string // what was counted: requests (the default) or transactions
	requests          int
	perSecond         float64
	p50, p99, slowest time.Duration
	statuses          map[int]int
	errors            int
	elapsed           time.Duration // from the first request to the last client's end
	ranOut            time.Duration // when a client first found nothing left to use up, or 0
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

// errRanOut is what a request maker returns when what its requests use up (cards, payee
// banks) is gone: the client stops there.
var errRanOut = errors.New("nothing left to use up")

// measure sends requests from clients goroutines, one after another each, for d, or until
// next returns errRanOut for each of them.
func measure(ctx context.Context, client *http.Client, next func(int) (*http.Request, error), clients int, d time.Duration) benchResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		res       = benchResult{statuses: map[int]int{}}
		wg        sync.WaitGroup
		ranOut    atomic.Int64
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
				if errors.Is(err, errRanOut) {
					ranOut.CompareAndSwap(0, int64(max(time.Since(start), 1)))
					break
				}
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
	res.ranOut = time.Duration(ranOut.Load())
	res.summarize(latencies, time.Since(start))
	return res
}

// summarize sets r's count, rate and percentiles from the latencies of what was done in
// elapsed.
func (r *benchResult) summarize(latencies []time.Duration, elapsed time.Duration) {
	slices.Sort(latencies)
	r.elapsed = elapsed
	r.requests = len(latencies)
	if r.requests > 0 {
		r.perSecond = float64(r.requests) / elapsed.Seconds()
		r.p50 = latencies[len(latencies)/2]
		r.p99 = latencies[len(latencies)*99/100]
		r.slowest = latencies[len(latencies)-1]
	}
}

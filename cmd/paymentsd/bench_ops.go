package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/command"
)

// The operations of paymentsd bench: what each request sends, and what each operation
// makes through the API, or is given, before the clock starts. The objects made for a run
// carry its own tag (emails, names) or belong to a user or payee made for it, so a run
// never repeats an earlier run's change.

// nextRequest makes the next request of a client.
type nextRequest = func(client int) (*http.Request, error)

// benchOp is one operation bench can drive.
type benchOp struct {
	name  string
	write bool     // -baseline measures raw writers (SQLite's, or PostgreSQL's) rather than the bare server
	needs []string // the flags it cannot do without
	// usesUp names what each request uses up, for an op that has only so many (more says
	// how to give it more); the line saying they ran out uses both.
	usesUp, more string
	setup        func(b *bencher, ctx context.Context) (nextRequest, error)
}

// signedWith returns the platform's credential flags and extra.
func signedWith(extra ...string) []string {
	return append([]string{"platform", "secret"}, extra...)
}

// benchOps lists the operations in the order of the help: the writes, then the reads.
var benchOps = []benchOp{
	{name: "create", write: true, needs: signedWith(), setup: (*bencher).createUsers},
	{name: "create-payee", write: true, needs: []string{"api-key", "api-secret"}, setup: (*bencher).createPayees},
	{name: "update-payee", write: true, needs: signedWith("api-key", "api-secret", "user"), setup: (*bencher).updatePayee},
	{name: "add-account", write: true, needs: signedWith(), setup: (*bencher).addAccounts},
	{name: "delete-card", write: true, needs: signedWith("cards"), usesUp: "cards", more: "list more in -cards",
		setup: (*bencher).deleteCards},
	{name: "add-payee-bank", write: true, needs: signedWith("api-key", "api-secret", "user"), setup: (*bencher).addPayeeBanks},
	{name: "delete-payee-bank", write: true, needs: signedWith("api-key", "api-secret", "user"), usesUp: "payee banks",
		more: "add more first with -banks N", setup: (*bencher).deletePayeeBanks},
	{name: "get", needs: signedWith(), setup: (*bencher).getUser},
	{name: "list", needs: signedWith(), setup: (*bencher).listUsers},
	{name: "get-account", needs: signedWith("account"), setup: (*bencher).getAccount},
	{name: "list-addresses", needs: signedWith("user"), setup: (*bencher).listAddresses},
	{name: "get-address", needs: signedWith("address"), setup: (*bencher).getAddress},
	{name: "rules", needs: signedWith(), setup: (*bencher).getRules},
	{name: "rates", needs: signedWith(), setup: (*bencher).getRates},
}

func lookupBenchOp(name string) (benchOp, bool) {
	for _, op := range benchOps {
		if op.name == name {
			return op, true
		}
	}
	return benchOp{}, false
}

func benchOpNames() []string {
	names := make([]string, len(benchOps))
	for i, op := range benchOps {
		names[i] = op.name
	}
	return names
}

// missing returns the flags op needs that are empty in fs, each with its dash.
func (op benchOp) missing(fs *flag.FlagSet) []string {
	var missing []string
	for _, name := range op.needs {
		if fs.Lookup(name).Value.String() == "" {
			missing = append(missing, "-"+name)
		}
	}
	return missing
}

// andList writes "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// benchFixtures are what bench is given, for the operations whose objects the API has no
// route to make: the administration commands make them.
type benchFixtures struct {
	apiKey, apiSecret string // a user-API key, of user
	user              string
	account           string // a bank account of an identity-verified user
	cards             string // a file of USER_ID/CARD_ID lines
	address           string // USER_ID/ADDRESS_ID
	country, payout   string // of rules and rates
	banks             int    // payee banks to add for delete-payee-bank; 0: for twice the run
}

// bencher makes the requests of one operation.
type bencher struct {
	client                *http.Client
	url, platform, secret string
	fix                   benchFixtures
	clients               int
	duration              time.Duration
	run                   string // tells this run's emails from another's
	seq                   atomic.Int64
	last                  benchResult
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

// keyed makes a user-API request.
func (b *bencher) keyed(method, target string, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(method, b.url+target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set(payments.HeaderAPIKey, b.fix.apiKey)
	req.Header.Set(payments.HeaderAPISecret, b.fix.apiSecret)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// reading returns the maker of a signed GET of target.
func (b *bencher) reading(target string) nextRequest {
	return func(int) (*http.Request, error) { return b.signed(http.MethodGet, target, nil) }
}

// call sends the request next makes before the clock starts and decodes the data of the
// answer into data, unless nil. An answer but a 200 is an error saying what was being done.
func (b *bencher) call(ctx context.Context, what string, next nextRequest, data any) error {
	req, err := next(0)
	if err != nil {
		return err
	}
	resp, err := b.client.Do(req.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %s", what, resp.StatusCode, bytes.TrimSpace(body))
	}
	if data == nil {
		return nil
	}
	var envelope struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("%s: the answer: %w", what, err)
	}
	if err := json.Unmarshal(envelope.Data, data); err != nil {
		return fmt.Errorf("%s: the answer's data: %w", what, err)
	}
	return nil
}

// uuidFlag returns the value of flag name in canonical form, or a usage error.
func uuidFlag(name, value string) (string, error) {
	id, err := uuid.Parse(value)
	if err != nil {
		return "", command.Usagef("-%s %q: not a UUID", name, value)
	}
	return id.String(), nil
}

// idPair parses ID/ID, as -address and the lines of -cards are written.
func idPair(s string) (first, second string, ok bool) {
	a, b, found := strings.Cut(strings.TrimSpace(s), "/")
	x, errA := uuid.Parse(a)
	y, errB := uuid.Parse(b)
	if !found || errA != nil || errB != nil {
		return "", "", false
	}
	return x.String(), y.String(), true
}

// pool hands out objects that each request uses up, each once, to whichever client asks
// first.
type pool[T any] struct {
	items []T
	next  atomic.Int64
}

// take returns the next object, or errRanOut when none is left.
func (p *pool[T]) take() (T, error) {
	i := p.next.Add(1) - 1
	if i >= int64(len(p.items)) {
		var none T
		return none, errRanOut
	}
	return p.items[i], nil
}

// newUser makes a Create User request with a new email.
func (b *bencher) newUser(int) (*http.Request, error) {
	body := fmt.Appendf(nil, `{"name":"Bench User","email":"bench-%s-%d@example.com"}`, b.run, b.seq.Add(1))
	return b.signed(http.MethodPost, "/api/platform/users/create", body)
}

// newPayee makes a Create Payee request, with the user-API key, with a new email.
func (b *bencher) newPayee(int) (*http.Request, error) {
	body := fmt.Appendf(nil, `{"name":"Bench Payee","email":"bench-payee-%s-%d@example.com"}`, b.run, b.seq.Add(1))
	return b.keyed(http.MethodPost, "/api/user-api/payee/create", body)
}

// madeUser makes a user of the platform through the API and returns its id.
func (b *bencher) madeUser(ctx context.Context) (string, error) {
	var u struct {
		UserID string `json:"user_id"`
	}
	err := b.call(ctx, "making a user", b.newUser, &u)
	return u.UserID, err
}

// madePayee makes a payee with the user-API key and returns -user and the payee's id.
func (b *bencher) madePayee(ctx context.Context) (user, payee string, err error) {
	if user, err = uuidFlag("user", b.fix.user); err != nil {
		return "", "", err
	}
	var p struct {
		PayeeID string `json:"payee_id"`
	}
	err = b.call(ctx, "making a payee with -api-key", b.newPayee, &p)
	return user, p.PayeeID, err
}

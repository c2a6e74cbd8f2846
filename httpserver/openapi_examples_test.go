package httpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/outbox"
)

// The examples of openapi.json and docs/api.md are real answers: a fixed script of
// requests run through the handler on a new database, with a fixed clock and ids drawn
// from a seeded generator, so that the same code answers the same bytes every time.

// exampleTime is the clock of the examples.
var exampleTime = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// exchange is one request of the script and its answer.
type exchange struct {
	pattern, method, target string
	reqHeader               http.Header
	reqBody                 []byte
	status                  int
	respHeader              http.Header
	respBody                []byte
}

// exampleSet holds the first answer of each status, by route, and of the answers every
// route of a kind gives (401, 413, 415, 429, 400, 500), by status.
type exampleSet struct {
	byRoute map[string]map[int]*exchange
	shared  map[int]*exchange
	all     []*exchange
}

func (s *exampleSet) add(e *exchange, shared bool) {
	s.all = append(s.all, e)
	if shared {
		if s.shared[e.status] == nil {
			s.shared[e.status] = e
		}
		return
	}
	if s.byRoute[e.pattern] == nil {
		s.byRoute[e.pattern] = map[int]*exchange{}
	}
	if s.byRoute[e.pattern][e.status] == nil {
		s.byRoute[e.pattern][e.status] = e
	}
}

// exampleIDs returns a generator of ids drawn from a seeded source.
func exampleIDs() func() uuid.UUID {
	var mu sync.Mutex
	src := rand.NewChaCha8([32]byte{'p', 'a', 'y', 'm', 'e', 'n', 't', 's'})
	return func() uuid.UUID {
		mu.Lock()
		defer mu.Unlock()
		id, err := uuid.NewRandomFromReader(src)
		if err != nil {
			panic(err)
		}
		return id
	}
}

// exampleRun is the script's world.
type exampleRun struct {
	t        testing.TB
	svc      *payments.Service
	h, rl    http.Handler // the handler; and one with a rate limit of 1 request
	platform payments.PlatformCredentials
	key      payments.APIKey
	set      *exampleSet
}

// runExamples runs the script and returns its answers.
func runExamples(t testing.TB) *exampleSet {
	t.Helper()
	ctx := context.Background()
	svc, err := payments.Open(ctx, filepath.Join(t.TempDir(), "examples.db"), payments.Options{
		Now:   func() time.Time { return exampleTime },
		NewID: exampleIDs(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	now := func() time.Time { return exampleTime }
	x := &exampleRun{
		t:   t,
		svc: svc,
		h:   NewWithOptions(svc, nil, Options{Now: now}),
		rl:  NewWithOptions(svc, nil, Options{Now: now, RateLimit: 1, RateBurst: 1}),
		set: &exampleSet{byRoute: map[string]map[int]*exchange{}, shared: map[int]*exchange{}},
	}
	if x.platform, err = svc.CreatePlatform(ctx, "Acme Payroll", payments.Sandbox); err != nil {
		t.Fatal(err)
	}
	x.script(ctx)
	return x.set
}

// must stops the run on an administration error: the script itself is wrong.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("examples: %v", err))
	}
	return v
}

// req describes one request of the script.
type req struct {
	pattern, target, body string
	want                  int
	shared                bool              // an answer every route of a kind gives
	header                map[string]string // extra headers ("" value: sent empty)
	nosign                bool              // leave out X-Signature
	userAPI               bool
	h                     http.Handler // nil: the ordinary handler
}

// do sends r, signed as the platform (or with the API key), and returns the answer's
// data member (or the body) decoded.
func (x *exampleRun) do(r req) map[string]any {
	x.t.Helper()
	method, _, _ := strings.Cut(r.pattern, " ")
	var body []byte
	if r.body != "" {
		body = []byte(r.body)
	}
	hr := httptest.NewRequest(method, r.target, bytes.NewReader(body))
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.userAPI {
		hr.Header.Set(payments.HeaderAPIKey, x.key.APIKey.String())
		hr.Header.Set(payments.HeaderAPISecret, x.key.APISecret)
	} else {
		hr.Header.Set(payments.HeaderPlatformID, x.platform.PlatformID.String())
		if !r.nosign {
			hr.Header.Set(payments.HeaderSignature, payments.Sign(x.platform.Secret, method, r.target, body))
		}
	}
	for k, v := range r.header {
		hr.Header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	sent := hr.Header.Clone()
	h := r.h
	if h == nil {
		h = x.h
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, hr)
	if rec.Code != r.want {
		x.t.Fatalf("example %s %s: status %d, want %d: %s", method, r.target, rec.Code, r.want, rec.Body)
	}
	x.set.add(&exchange{
		pattern: r.pattern, method: method, target: r.target, reqHeader: sent, reqBody: body,
		status: rec.Code, respHeader: rec.Header(), respBody: rec.Body.Bytes(),
	}, r.shared)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		x.t.Fatalf("example %s %s: %v", method, r.target, err)
	}
	if data, ok := out["data"].(map[string]any); ok {
		return data
	}
	return out
}

func (x *exampleRun) script(ctx context.Context) {
	t := x.t
	const (
		createUser   = "POST /api/platform/users/create"
		listUsers    = "POST /api/platform/users/list"
		getUser      = "GET /api/platform/users/get/{user_id}"
		addAccount   = "POST /api/platform/accounts/add-account"
		getAccount   = "GET /api/platform/accounts/get-account/{account_id}"
		createPayee  = "POST /api/user-api/payee/create"
		updatePayee  = "PUT /api/platform/payee/update/{user_id}"
		deleteCard   = "DELETE /api/platform/card/delete/{user_id}"
		addBank      = "POST /api/platform/cross-border/payee/bank/{user_id}"
		deleteBank   = "DELETE /api/platform/cross-border/payee/bank/{user_id}/{bank_uuid}"
		addresses    = "GET /api/platform/cross-border/payee/addresses/{user_id}"
		address      = "GET /api/platform/cross-border/payee/address/{user_id}/{address_id}"
		payeeRules   = "GET /api/platform/cross-border/payee-rules"
		rates        = "GET /api/platform/cross-border/rates"
		unknown      = "0b7e2f64-3c1a-4f5e-9d2b-6a8c1e4f7a90" // an id nobody has
		adaBody      = `{"name":"Ada Lovelace","email":"ada@example.com","phone_country_code":"+44","phone":"2079460000"}`
		accountBody  = `{"user_id":"%s","account_holder_name":"Ada Lovelace","bank_name":"Chase","nick_name":"Everyday","account_number":"000123456789","routing_number":"021000021","account_type":"PERSONAL_CHECKING","is_default":true}`
		payeeBankFmt = `{"payee_id":"%s","bank_nick_name":"Ravi's HDFC savings","account_number":"123456789012","country":"IN","bank_acc_type":"savings","identifier_type":"IFSC","identifier_value":"HDFC0001234"}`
	)
	f := func(format string, args ...any) string { return fmt.Sprintf(format, args...) }

	// Users.
	ada := x.do(req{pattern: createUser, target: "/api/platform/users/create", body: adaBody, want: 200})
	user := ada["user_id"].(string)
	x.do(req{pattern: createUser, target: "/api/platform/users/create", body: `{"name":"Ada King","email":"ADA@example.com"}`, want: 409})
	x.do(req{pattern: createUser, target: "/api/platform/users/create", body: `{"name":"","phone":"2079460000"}`, want: 422})
	x.do(req{pattern: createUser, target: "/api/platform/users/create", body: `{"name":"Alan Turing","email":"alan@example.com"}`, want: 401, nosign: true, shared: true})
	x.do(req{pattern: createUser, target: "/api/platform/users/create", body: `{"name":"Alan Turing","email":"alan@example.com"}`, want: 415, shared: true,
		header: map[string]string{"Content-Type": "text/plain"}})
	x.do(req{pattern: createUser, target: "/api/platform/users/create", body: `{"name":"` + strings.Repeat("A", MaxBodyBytes) + `"}`, want: 413, shared: true})
	x.do(req{pattern: createUser, target: "/api/platform/users/create", body: `{"name":"Alan Turing","email":"alan@example.com"}`, want: 400, shared: true,
		header: map[string]string{"Idempotency-Key": ""}})
	x.do(req{pattern: listUsers, target: "/api/platform/users/list", body: `{"rows_per_page":10,"page_no":1}`, want: 200})
	x.do(req{pattern: listUsers, target: "/api/platform/users/list", body: `{"rows_per_page":15}`, want: 422})
	x.do(req{pattern: getUser, target: "/api/platform/users/get/" + user, want: 200})
	x.do(req{pattern: getUser, target: "/api/platform/users/get/" + unknown, want: 404})
	x.do(req{pattern: getUser, target: "/api/platform/users/get/42", want: 422})
	x.do(req{pattern: getUser, target: "/api/platform/users/get/" + user, want: 200, h: x.rl})
	x.do(req{pattern: getUser, target: "/api/platform/users/get/" + user, want: 429, h: x.rl, shared: true})

	// Bank accounts: hidden until the user is verified.
	acct := x.do(req{pattern: addAccount, target: "/api/platform/accounts/add-account", body: f(accountBody, user), want: 200})
	account := acct["account_id"].(string)
	x.do(req{pattern: addAccount, target: "/api/platform/accounts/add-account", body: f(accountBody, user), want: 409})
	x.do(req{pattern: addAccount, target: "/api/platform/accounts/add-account", body: f(accountBody, unknown), want: 404})
	x.do(req{pattern: addAccount, target: "/api/platform/accounts/add-account",
		body: f(`{"user_id":"%s","bank_name":"Chase","account_number":"12","routing_number":"021000021","account_type":"CHECKING"}`, user), want: 422})
	x.do(req{pattern: getAccount, target: "/api/platform/accounts/get-account/" + account, want: 403})
	if err := x.svc.VerifyUser(ctx, user); err != nil {
		t.Fatal(err)
	}
	x.do(req{pattern: getAccount, target: "/api/platform/accounts/get-account/" + account, want: 200})
	x.do(req{pattern: getAccount, target: "/api/platform/accounts/get-account/" + unknown, want: 404})
	x.do(req{pattern: getAccount, target: "/api/platform/accounts/get-account/not-an-id", want: 422})

	// Payees, through the user's API key.
	x.key = must(x.svc.CreateAPIKey(ctx, user))
	p := x.do(req{pattern: createPayee, target: "/api/user-api/payee/create", body: `{"name":"Ravi Kumar","email":"ravi@example.com"}`, want: 200, userAPI: true})
	payee := p["payee_id"].(string)
	x.do(req{pattern: createPayee, target: "/api/user-api/payee/create", body: `{"name":"Ravi Kumar","phone":"9876543210"}`, want: 422, userAPI: true})
	x.do(req{pattern: updatePayee, target: "/api/platform/payee/update/" + user, body: f(`{"payee_id":"%s","name":"Ravi K. Kumar"}`, payee), want: 200})
	x.do(req{pattern: updatePayee, target: "/api/platform/payee/update/" + user, body: f(`{"payee_id":"%s","name":"Ravi K. Kumar"}`, unknown), want: 404})
	x.do(req{pattern: updatePayee, target: "/api/platform/payee/update/" + user, body: f(`{"payee_id":"%s"}`, payee), want: 422})

	// Cards: saved by an operator, deleted through the API.
	card := must(x.svc.AddCard(ctx, user, payments.NewCard{Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: 2030}))
	x.do(req{pattern: deleteCard, target: "/api/platform/card/delete/" + user, body: f(`{"card_id":"%s"}`, card.CardID), want: 200})
	x.do(req{pattern: deleteCard, target: "/api/platform/card/delete/" + user, body: f(`{"card_id":"%s"}`, unknown), want: 404})
	x.do(req{pattern: deleteCard, target: "/api/platform/card/delete/" + user, body: `{"card_id":"4242"}`, want: 422})

	// Payee banks.
	b := x.do(req{pattern: addBank, target: "/api/platform/cross-border/payee/bank/" + user, body: f(payeeBankFmt, payee), want: 200})
	bank := b["bank_id"].(string)
	x.do(req{pattern: addBank, target: "/api/platform/cross-border/payee/bank/" + unknown, body: f(payeeBankFmt, payee), want: 404})
	x.do(req{pattern: addBank, target: "/api/platform/cross-border/payee/bank/" + user,
		body: f(`{"payee_id":"%s","account_number":"123456789012","country":"IN","bank_acc_type":"savings","identifier_value":"HDFC1234"}`, payee), want: 422})
	x.do(req{pattern: deleteBank, target: "/api/platform/cross-border/payee/bank/" + user + "/" + bank, want: 200})
	x.do(req{pattern: deleteBank, target: "/api/platform/cross-border/payee/bank/" + user + "/" + bank, want: 404})
	x.do(req{pattern: deleteBank, target: "/api/platform/cross-border/payee/bank/" + user + "/42", want: 422})

	// Payee addresses: stored by an operator, read through the API.
	last, line2 := "Kumar", "Andheri East"
	addr := must(x.svc.AddPayeeAddress(ctx, user, payee, payments.NewPayeeAddress{
		Name: "Ravi", LastName: &last, AddressLine1: "12 MG Road", AddressLine2: &line2,
		City: "Mumbai", State: "MH", Zipcode: "400069", Country: "IN",
	}))
	x.do(req{pattern: addresses, target: "/api/platform/cross-border/payee/addresses/" + user + "?payee_id=" + payee, want: 200})
	x.do(req{pattern: addresses, target: "/api/platform/cross-border/payee/addresses/" + unknown, want: 404})
	x.do(req{pattern: addresses, target: "/api/platform/cross-border/payee/addresses/" + user + "?payee_id=ravi", want: 422})
	x.do(req{pattern: address, target: "/api/platform/cross-border/payee/address/" + user + "/" + addr.ID.String(), want: 200})
	x.do(req{pattern: address, target: "/api/platform/cross-border/payee/address/" + user + "/" + unknown, want: 404})
	x.do(req{pattern: address, target: "/api/platform/cross-border/payee/address/" + user + "/42", want: 422})

	// Reference data.
	x.do(req{pattern: payeeRules, target: "/api/platform/cross-border/payee-rules?country_code=IN&payout_currency=INR", want: 200})
	x.do(req{pattern: payeeRules, target: "/api/platform/cross-border/payee-rules?country_code=IN&payout_currency=EUR", want: 404})
	x.do(req{pattern: payeeRules, target: "/api/platform/cross-border/payee-rules?country_code=India", want: 422})
	must(x.svc.SetExchangeRate(ctx, payments.NewExchangeRate{BaseCurrency: "USD", PayoutCurrency: "INR", ExchangeRate: "83.12"}))
	must(x.svc.SetExchangeRate(ctx, payments.NewExchangeRate{BaseCurrency: "EUR", PayoutCurrency: "INR", ExchangeRate: "90.0475", Fixed: true}))
	x.do(req{pattern: rates, target: "/api/platform/cross-border/rates?payout_currency=INR", want: 200})
	x.do(req{pattern: rates, target: "/api/platform/cross-border/rates?payout_currency=inr", want: 422})

	x.webhooks(ctx)

	// A fault of ours is never provoked on purpose: its body is what writeError answers
	// for any error that is not the library's.
	x.set.add(&exchange{status: http.StatusInternalServerError,
		respBody: encodeJSON(500, errorEnvelope(payments.ErrorMessage(errors.New("a fault")), exampleTime))}, true)
	// Nor is a database out of reach: its message is the one TestUnavailable sees the
	// server answer.
	x.set.add(&exchange{status: http.StatusServiceUnavailable,
		respBody: encodeJSON(503, errorEnvelope(unavailableMessage, exampleTime))}, true)
}

// unavailableMessage is the message of a 503 (payments.CodeUnavailable).
const unavailableMessage = "Service temporarily unavailable: the database cannot be reached. Retry later."

// webhooks runs the script's webhook endpoints and events: an endpoint, an event
// delivered to it, whose receiver answers 410 Gone (a dispatcher's attempt, recorded
// through the library), which disables the endpoint; then the events, resend, enable,
// rotation and delete.
func (x *exampleRun) webhooks(ctx context.Context) {
	const (
		createHook = "POST /api/platform/webhooks/create"
		listHooks  = "GET /api/platform/webhooks/list"
		deleteHook = "DELETE /api/platform/webhooks/delete/{endpoint_id}"
		enableHook = "POST /api/platform/webhooks/enable/{endpoint_id}"
		rotateHook = "POST /api/platform/webhooks/rotate-secret/{endpoint_id}"
		listEvents = "GET /api/platform/events/list"
		getEvent   = "GET /api/platform/events/get/{event_id}"
		resend     = "POST /api/platform/events/resend/{event_id}"
		getHook    = "GET /api/platform/webhooks/get/{endpoint_id}"
		updateHook = "PUT /api/platform/webhooks/update/{endpoint_id}"
		pauseHook  = "POST /api/platform/webhooks/disable/{endpoint_id}"
		recoverTo  = "POST /api/platform/webhooks/recover/{endpoint_id}"
		testHook   = "POST /api/platform/webhooks/test/{endpoint_id}"
		attempts   = "GET /api/platform/webhooks/attempts/{endpoint_id}"
		unknown    = "0b7e2f64-3c1a-4f5e-9d2b-6a8c1e4f7a90"
	)
	ep := x.do(req{pattern: createHook, target: "/api/platform/webhooks/create",
		body: `{"url":"https://hooks.example.com/payments","events":["user.created","payee.created"],"description":"Payroll sync"}`, want: 200})
	endpoint := ep["id"].(string)
	x.do(req{pattern: createHook, target: "/api/platform/webhooks/create", body: `{"url":"hooks.example.com/payments"}`, want: 422})

	// An event for the endpoint, and a dispatcher's attempt at it, answered 410 Gone.
	must(x.svc.CreateUser(ctx, x.platform.PlatformID, payments.NewUser{Name: "Grace Hopper", Email: new("grace@example.com")}))
	claimed := must(x.svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute))
	if len(claimed) != 1 {
		x.t.Fatalf("examples: %d deliveries claimed, want 1", len(claimed))
	}
	event := claimed[0].EventID
	if err := x.svc.Outbox().RecordAttempts(ctx, []outbox.AttemptResult{{
		Delivery: claimed[0], At: exampleTime.Add(2 * time.Second), StatusCode: http.StatusGone, Error: "status 410",
		Latency: 182 * time.Millisecond, Response: []byte(`{"error":"endpoint retired"}`), Gone: true,
	}}, outbox.DeliveryPolicy{Schedule: []time.Duration{5 * time.Second}}); err != nil {
		x.t.Fatal(err)
	}
	x.do(req{pattern: listHooks, target: "/api/platform/webhooks/list", want: 200})
	x.do(req{pattern: getHook, target: "/api/platform/webhooks/get/" + endpoint, want: 200})
	x.do(req{pattern: getHook, target: "/api/platform/webhooks/get/" + unknown, want: 404})
	x.do(req{pattern: getHook, target: "/api/platform/webhooks/get/42", want: 422})
	x.do(req{pattern: attempts, target: "/api/platform/webhooks/attempts/" + endpoint + "?limit=10", want: 200})
	x.do(req{pattern: attempts, target: "/api/platform/webhooks/attempts/" + unknown, want: 404})
	x.do(req{pattern: attempts, target: "/api/platform/webhooks/attempts/" + endpoint + "?after=x1&limit=0", want: 422})
	x.do(req{pattern: testHook, target: "/api/platform/webhooks/test/" + endpoint, want: 409})
	since := fmt.Sprintf(`{"since":"%s"}`, exampleTime.Add(-time.Hour).Format(time.RFC3339))
	x.do(req{pattern: recoverTo, target: "/api/platform/webhooks/recover/" + endpoint, body: since, want: 409})

	x.do(req{pattern: listEvents, target: "/api/platform/events/list?type=user.created&limit=2", want: 200})
	x.do(req{pattern: listEvents, target: "/api/platform/events/list?limit=500&type=user.deleted", want: 422})
	x.do(req{pattern: getEvent, target: "/api/platform/events/get/" + event, want: 200})
	x.do(req{pattern: getEvent, target: "/api/platform/events/get/" + unknown, want: 404})
	x.do(req{pattern: getEvent, target: "/api/platform/events/get/42", want: 422})

	// The endpoint is disabled: a resend to it is refused until it is enabled.
	to := fmt.Sprintf(`{"endpoint_id":"%s"}`, endpoint)
	x.do(req{pattern: resend, target: "/api/platform/events/resend/" + event, body: to, want: 409})
	x.do(req{pattern: enableHook, target: "/api/platform/webhooks/enable/" + endpoint, want: 200})
	x.do(req{pattern: enableHook, target: "/api/platform/webhooks/enable/" + unknown, want: 404})
	x.do(req{pattern: enableHook, target: "/api/platform/webhooks/enable/42", want: 422})
	x.do(req{pattern: resend, target: "/api/platform/events/resend/" + event, body: to, want: 200})
	x.do(req{pattern: recoverTo, target: "/api/platform/webhooks/recover/" + endpoint, body: since, want: 200})
	x.do(req{pattern: recoverTo, target: "/api/platform/webhooks/recover/" + unknown, body: since, want: 404})
	x.do(req{pattern: recoverTo, target: "/api/platform/webhooks/recover/" + endpoint, body: `{"since":"2026-11-23 09:00"}`, want: 422})
	x.do(req{pattern: testHook, target: "/api/platform/webhooks/test/" + endpoint, want: 200})
	x.do(req{pattern: testHook, target: "/api/platform/webhooks/test/" + unknown, want: 404})
	x.do(req{pattern: testHook, target: "/api/platform/webhooks/test/42", want: 422})
	x.do(req{pattern: updateHook, target: "/api/platform/webhooks/update/" + endpoint,
		body: `{"url":"https://hooks.example.com/payments/v2","events":["user.created","payee.created","webhook_endpoint.disabled"]}`, want: 200})
	x.do(req{pattern: updateHook, target: "/api/platform/webhooks/update/" + unknown, body: `{"description":"Payroll"}`, want: 404})
	x.do(req{pattern: updateHook, target: "/api/platform/webhooks/update/" + endpoint, body: `{"url":"hooks.example.com/payments"}`, want: 422})
	x.do(req{pattern: resend, target: "/api/platform/events/resend/" + unknown, body: `{}`, want: 404})
	x.do(req{pattern: resend, target: "/api/platform/events/resend/" + event, body: `{"endpoint_id":"42"}`, want: 422})

	x.do(req{pattern: rotateHook, target: "/api/platform/webhooks/rotate-secret/" + endpoint, want: 200})
	x.do(req{pattern: rotateHook, target: "/api/platform/webhooks/rotate-secret/" + unknown, want: 404})
	x.do(req{pattern: rotateHook, target: "/api/platform/webhooks/rotate-secret/42", want: 422})
	x.do(req{pattern: pauseHook, target: "/api/platform/webhooks/disable/" + endpoint, want: 200})
	x.do(req{pattern: pauseHook, target: "/api/platform/webhooks/disable/" + unknown, want: 404})
	x.do(req{pattern: pauseHook, target: "/api/platform/webhooks/disable/42", want: 422})
	x.do(req{pattern: deleteHook, target: "/api/platform/webhooks/delete/" + endpoint, want: 200})
	x.do(req{pattern: deleteHook, target: "/api/platform/webhooks/delete/" + endpoint, want: 404})
	x.do(req{pattern: deleteHook, target: "/api/platform/webhooks/delete/42", want: 422})

	x.standIns(ctx)
}

// standIns replaces, in every recorded request and answer, what no seed makes the same
// from one run to the next with stand-ins that are: event ids (version 7 UUIDs from the
// machine's clock, so that they sort as the events happened) and webhook secrets (random
// by design). A stand-in keeps the form and the order of what it replaces, and is the
// same wherever the value appears.
func (x *exampleRun) standIns(ctx context.Context) {
	page := must(x.svc.ListEvents(ctx, x.platform.PlatformID, payments.EventQuery{Limit: "100"}))
	if page.HasMore {
		x.t.Fatal("examples: more than 100 events: list them all")
	}
	var pairs []string
	ms := uint64(exampleTime.UnixMilli())
	for i, e := range page.Events {
		var id uuid.UUID
		for b := range 6 {
			id[b] = byte(ms >> (40 - 8*b))
		}
		id[6], id[7] = 0x70|byte(i>>8&0x0f), byte(i)
		id[8] = 0x80
		id[15] = byte(i)
		pairs = append(pairs, e.ID.String(), id.String())
	}
	secret := regexp.MustCompile(`whsec_[A-Za-z0-9+/]+=*`)
	seen := map[string]bool{}
	for _, e := range x.set.all {
		for _, s := range secret.FindAll(e.respBody, -1) {
			if !seen[string(s)] {
				seen[string(s)] = true
				sum := sha256.Sum256(fmt.Appendf(nil, "example webhook secret %d", len(seen)))
				pairs = append(pairs, string(s), "whsec_"+base64.StdEncoding.EncodeToString(sum[:]))
			}
		}
	}
	r := strings.NewReplacer(pairs...)
	for _, e := range x.set.all {
		e.target = r.Replace(e.target)
		if e.reqBody != nil {
			e.reqBody = []byte(r.Replace(string(e.reqBody)))
		}
		e.respBody = []byte(r.Replace(string(e.respBody)))
	}
}

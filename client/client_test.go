package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oapi-codegen/runtime/types"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/client"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/signing"
)

// server is the real handler over a fresh store (SQLite, or PostgreSQL when
// PAYMENTS_TEST_POSTGRES names one), served on 127.0.0.1, with one platform of each
// signing scheme.
type server struct {
	svc         *payments.Service
	url         string
	plain       payments.PlatformCredentials
	timestamped payments.PlatformCredentials
}

func newServer(t *testing.T) *server {
	t.Helper()
	ctx := context.Background()
	dsn, keyFile := pgtest.NewStore(t)
	svc, err := payments.Open(ctx, dsn, payments.Options{KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	plain, err := svc.CreatePlatform(ctx, "Plain", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	stamped, err := svc.CreatePlatform(ctx, "Stamped", payments.Sandbox, payments.PlatformOptions{RequireTimestamp: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpserver.New(svc, nil)) // 127.0.0.1
	t.Cleanup(srv.Close)
	return &server{svc: svc, url: srv.URL, plain: plain, timestamped: stamped}
}

func (s *server) client(t *testing.T, creds client.Credentials) *client.Client {
	t.Helper()
	c, err := client.New(s.url, creds)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// refused asserts err is an *client.Error of the status.
func refused(t *testing.T, err error, status int) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want a *client.Error of %d", err, err, status)
	}
	if e.StatusCode != status {
		t.Fatalf("error %v, want status %d", e, status)
	}
	if e.RequestID == "" {
		t.Errorf("error %v carries no request id", e)
	}
	return e
}

// invalid asserts err is a *client.ValidationError whose first failure is at loc.
func invalid(t *testing.T, err error, loc ...string) *client.ValidationError {
	t.Helper()
	var e *client.ValidationError
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want a *client.ValidationError", err, err)
	}
	if len(e.Detail) == 0 {
		t.Fatalf("a 422 without detail: %v", e)
	}
	got := e.Detail[0].Loc
	if len(got) != len(loc) {
		t.Fatalf("first failure at %d elements, want %v: %v", len(got), loc, e)
	}
	for i, l := range loc {
		if string(got[i]) != `"`+l+`"` {
			t.Fatalf("first failure at %v, want %v", e, loc)
		}
	}
	return e
}

func ptr[T any](v T) *T { return &v }

const unknown = "0b7e2f64-3c1a-4f5e-9d2b-6a8c1e4f7a90" // an id nobody has

// TestEveryRoute calls every route of the API through the client, for the platform of
// each signing scheme: its answer typed, and a refusal of each route as a typed error.
func TestEveryRoute(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct {
		name  string
		creds client.Credentials
	}{
		{"plain", client.Platform(s.plain.PlatformID.String(), s.plain.Secret)},
		{"timestamped", client.TimestampedPlatform(s.timestamped.PlatformID.String(), s.timestamped.Secret)},
	} {
		t.Run(tc.name, func(t *testing.T) { everyRoute(t, s, s.client(t, tc.creds)) })
	}
}

func everyRoute(t *testing.T, s *server, c *client.Client) {
	ctx := context.Background()
	nobody := uuid.MustParse(unknown)

	// Users.
	email := client.Email("ada@example.com")
	user := must[*client.User](t)(c.CreateUser(ctx, client.CreateUserJSONRequestBody{
		Name: "Ada Lovelace", Email: &email, PhoneCountryCode: ptr("+44"), Phone: ptr("2079460000"),
	}))
	if user.Name != "Ada Lovelace" || user.Email == nil || *user.Email != "ada@example.com" {
		t.Fatalf("CreateUser: %+v", user)
	}
	_, err := c.CreateUser(ctx, client.CreateUserJSONRequestBody{Name: "Ada King", Email: ptr(client.Email("ADA@example.com"))})
	refused(t, err, http.StatusConflict)
	_, err = c.CreateUser(ctx, client.CreateUserJSONRequestBody{Name: "", Phone: ptr("2079460000")})
	invalid(t, err, "body", "name")

	rows := client.N10
	page := must[*client.UserListEnvelope](t)(c.ListUsers(ctx, client.ListUsersJSONRequestBody{RowsPerPage: &rows, PageNo: ptr[int64](1)}))
	if page.TotalRecords != 1 || len(page.Records) != 1 || page.Records[0].UserId != user.UserId {
		t.Fatalf("ListUsers: %+v", page)
	}
	_, err = c.ListUsers(ctx, client.ListUsersJSONRequestBody{PageNo: ptr[int64](0)})
	invalid(t, err, "body", "page_no")

	got := must[*client.User](t)(c.GetUser(ctx, user.UserId))
	if got.UserId != user.UserId {
		t.Fatalf("GetUser: %+v", got)
	}
	_, err = c.GetUser(ctx, nobody)
	refused(t, err, http.StatusNotFound)
	userID := user.UserId

	// Bank accounts: hidden until the user is verified.
	accountBody := client.AddBankAccountJSONRequestBody{
		UserId: userID, AccountHolderName: ptr("Ada Lovelace"), BankName: "Chase", AccountNumber: "000123456789",
		RoutingNumber: "021000021", AccountType: client.PERSONALCHECKING, IsDefault: ptr(true),
	}
	account := must[*client.BankAccount](t)(c.AddBankAccount(ctx, accountBody))
	_, err = c.AddBankAccount(ctx, accountBody)
	refused(t, err, http.StatusConflict)
	_, err = c.GetBankAccount(ctx, account.AccountId)
	refused(t, err, http.StatusForbidden)
	if err := s.svc.VerifyUser(ctx, userID.String()); err != nil {
		t.Fatal(err)
	}
	if a := must[*client.BankAccount](t)(c.GetBankAccount(ctx, account.AccountId)); a.AccountId != account.AccountId || a.AccountBalance != 0 {
		t.Fatalf("GetBankAccount: %+v", a)
	}
	_, err = c.GetBankAccount(ctx, nobody)
	refused(t, err, http.StatusNotFound)

	// Payees: created through the user's API key, updated by the platform.
	key := must[payments.APIKey](t)(s.svc.CreateAPIKey(ctx, userID.String()))
	u := s.client(t, client.APIKey(key.APIKey.String(), key.APISecret))
	payee := must[*client.Payee](t)(u.CreatePayee(ctx, client.CreatePayeeJSONRequestBody{Name: "Ravi Kumar", Email: ptr(client.Email("ravi@example.com"))}))
	_, err = u.CreatePayee(ctx, client.CreatePayeeJSONRequestBody{Name: "Ravi Kumar", Phone: ptr("9876543210")})
	invalid(t, err, "body")
	wrong := s.client(t, client.APIKey(key.APIKey.String(), "not-the-secret"))
	_, err = wrong.CreatePayee(ctx, client.CreatePayeeJSONRequestBody{Name: "Ravi Kumar", Email: ptr(client.Email("ravi@example.com"))})
	refused(t, err, http.StatusUnauthorized)
	renamed := must[*client.Payee](t)(c.UpdatePayee(ctx, userID, client.UpdatePayeeJSONRequestBody{PayeeId: payee.PayeeId, Name: "Ravi K. Kumar"}))
	if renamed.Name != "Ravi K. Kumar" {
		t.Fatalf("UpdatePayee: %+v", renamed)
	}
	_, err = c.UpdatePayee(ctx, userID, client.UpdatePayeeJSONRequestBody{PayeeId: nobody, Name: "Ravi"})
	refused(t, err, http.StatusNotFound)

	// Cards: saved by an operator, deleted through the API.
	card := must[payments.Card](t)(s.svc.AddCard(ctx, userID.String(), payments.NewCard{Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: 2030}))
	must[*client.DeletedCard](t)(c.DeleteCard(ctx, userID, client.DeleteCardJSONRequestBody{CardId: card.CardID}))
	_, err = c.DeleteCard(ctx, userID, client.DeleteCardJSONRequestBody{CardId: card.CardID})
	refused(t, err, http.StatusNotFound)

	// Payee banks.
	bank := must[*client.PayeeBank](t)(c.AddPayeeBank(ctx, userID, client.AddPayeeBankJSONRequestBody{
		PayeeId: payee.PayeeId, BankNickName: ptr("Ravi's HDFC savings"), AccountNumber: "123456789012", Country: "IN",
		BankAccType: client.Savings, IdentifierType: ptr("IFSC"), IdentifierValue: ptr("HDFC0001234"),
	}))
	if err := c.DeletePayeeBank(ctx, userID, bank.BankId); err != nil {
		t.Fatal(err)
	}
	refused(t, c.DeletePayeeBank(ctx, userID, bank.BankId), http.StatusNotFound)
	_, err = c.AddPayeeBank(ctx, nobody, client.AddPayeeBankJSONRequestBody{
		PayeeId: payee.PayeeId, AccountNumber: "123456789012", Country: "IN", BankAccType: client.Savings,
		IdentifierType: ptr("IFSC"), IdentifierValue: ptr("HDFC0001234"),
	})
	refused(t, err, http.StatusNotFound)

	// Payee addresses: stored by an operator, read through the API.
	addr := must[payments.PayeeAddress](t)(s.svc.AddPayeeAddress(ctx, userID.String(), payee.PayeeId.String(), payments.NewPayeeAddress{
		Name: "Ravi", AddressLine1: "12 MG Road", City: "Mumbai", State: "MH", Zipcode: "400069", Country: "IN",
	}))
	list := must[[]client.PayeeAddress](t)(c.ListPayeeAddresses(ctx, userID, &client.ListPayeeAddressesParams{PayeeId: &payee.PayeeId}))
	if len(list) != 1 || list[0].Id != addr.ID {
		t.Fatalf("ListPayeeAddresses: %+v", list)
	}
	if a := must[*client.PayeeAddress](t)(c.GetPayeeAddress(ctx, userID, addr.ID)); a.City != "Mumbai" {
		t.Fatalf("GetPayeeAddress: %+v", a)
	}
	_, err = c.GetPayeeAddress(ctx, userID, nobody)
	refused(t, err, http.StatusNotFound)

	// Reference data.
	rules := must[*client.PayeeRules](t)(c.GetPayeeRules(ctx, "IN", "INR"))
	if rules.CountryCode != "IN" {
		t.Fatalf("GetPayeeRules: %+v", rules)
	}
	_, err = c.GetPayeeRules(ctx, "IN", "EUR")
	refused(t, err, http.StatusNotFound)
	_, err = c.GetPayeeRules(ctx, "India", "INR")
	invalid(t, err, "query", "country_code")
	must[payments.ExchangeRate](t)(s.svc.SetExchangeRate(ctx, payments.NewExchangeRate{BaseCurrency: "USD", PayoutCurrency: "INR", ExchangeRate: "17.123456789"}))
	rates := must[[]client.ExchangeRate](t)(c.GetExchangeRates(ctx, "INR"))
	if len(rates) != 1 || rates[0].ExchangeRate != 17.123456789 { // float64: no digit lost
		t.Fatalf("GetExchangeRates: %+v", rates)
	}
	_, err = c.GetExchangeRates(ctx, "inr")
	invalid(t, err, "query", "payout_currency")

	// Webhook endpoints and events (nothing is delivered: no dispatcher runs).
	events := []client.CreateWebhookEndpointJSONBodyEvents{client.CreateWebhookEndpointJSONBodyEventsUserCreated}
	ep := must[*client.WebhookEndpoint](t)(c.CreateWebhookEndpoint(ctx, client.CreateWebhookEndpointJSONRequestBody{
		Url: "https://hooks.example.com/payments", Events: &events, Description: ptr("Payroll sync"),
	}))
	if ep.Secret == nil || *ep.Secret == "" {
		t.Fatalf("CreateWebhookEndpoint: no secret shown: %+v", ep)
	}
	_, err = c.CreateWebhookEndpoint(ctx, client.CreateWebhookEndpointJSONRequestBody{Url: "hooks.example.com/payments"})
	invalid(t, err, "body", "url")
	if eps := must[[]client.WebhookEndpoint](t)(c.ListWebhookEndpoints(ctx)); len(eps) != 1 || eps[0].Id != ep.Id {
		t.Fatalf("ListWebhookEndpoints: %+v", eps)
	}
	must[*client.User](t)(c.CreateUser(ctx, client.CreateUserJSONRequestBody{Name: "Grace Hopper", Email: ptr(client.Email("grace@example.com"))}))
	typ := client.ListEventsParamsTypeUserCreated
	// The list shows a write's event once the writing transactions of the database that
	// began before it have ended, waiting 2 s for them (docs/postgres.md): a test beside
	// this one may hold one longer.
	var evs *client.EventPage
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		evs = must[*client.EventPage](t)(c.ListEvents(ctx, &client.ListEventsParams{Type: &typ, Limit: ptr("10")}))
		if len(evs.Events) == 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(evs.Events) != 2 {
		t.Fatalf("ListEvents: %+v", evs)
	}
	_, err = c.ListEvents(ctx, &client.ListEventsParams{Limit: ptr("500")})
	invalid(t, err, "query", "limit")
	ev := evs.Events[0]
	if d := must[*client.EventDetail](t)(c.GetEvent(ctx, ev.Id)); d.Id != ev.Id {
		t.Fatalf("GetEvent: %+v", d)
	}
	_, err = c.GetEvent(ctx, nobody)
	refused(t, err, http.StatusNotFound)
	must[*client.Resent](t)(c.ResendEvent(ctx, ev.Id, client.ResendEventJSONRequestBody{EndpointId: &ep.Id}))
	_, err = c.ResendEvent(ctx, ev.Id, client.ResendEventJSONRequestBody{EndpointId: &nobody})
	refused(t, err, http.StatusNotFound)
	rotated := must[*client.WebhookEndpoint](t)(c.RotateWebhookSecret(ctx, ep.Id))
	if rotated.Secret == nil || *rotated.Secret == *ep.Secret {
		t.Fatalf("RotateWebhookSecret: %+v", rotated)
	}
	must[*client.WebhookEndpoint](t)(c.EnableWebhookEndpoint(ctx, ep.Id))
	must[*client.DeletedEndpoint](t)(c.DeleteWebhookEndpoint(ctx, ep.Id))
	_, err = c.DeleteWebhookEndpoint(ctx, ep.Id)
	refused(t, err, http.StatusNotFound)
	_, err = c.EnableWebhookEndpoint(ctx, ep.Id)
	refused(t, err, http.StatusNotFound)
	_, err = c.RotateWebhookSecret(ctx, ep.Id)
	refused(t, err, http.StatusNotFound)
}

// TestCredentials: a wrong secret, the wrong scheme for the platform, and no credentials.
func TestCredentials(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		creds client.Credentials
		want  string
	}{
		{"wrong secret", client.Platform(s.plain.PlatformID.String(), "not-the-secret"), "Invalid credentials."},
		// The timestamped form is not the signature of a platform of the plain scheme.
		{"timestamped for a plain platform", client.TimestampedPlatform(s.plain.PlatformID.String(), s.plain.Secret), "Invalid credentials."},
		{"plain for a timestamped platform", client.Platform(s.timestamped.PlatformID.String(), s.timestamped.Secret), "Missing header X-Timestamp."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.client(t, tc.creds).GetUser(ctx, uuid.MustParse(unknown))
			if e := refused(t, err, http.StatusUnauthorized); e.Message != tc.want {
				t.Errorf("message %q, want %q", e.Message, tc.want)
			}
		})
	}
	if _, err := client.New(s.url, client.Credentials{}); err == nil {
		t.Error("New without credentials: no error")
	}
}

// TestIdempotencyKey: a retry under the same key gets the stored answer; the same key with
// another body is the 422 envelope, not a validation error.
func TestIdempotencyKey(t *testing.T) {
	s := newServer(t)
	c := s.client(t, client.Platform(s.plain.PlatformID.String(), s.plain.Secret))
	ctx := client.WithIdempotencyKey(context.Background(), "create-ada-2026-11-23")
	body := client.CreateUserJSONRequestBody{Name: "Ada Lovelace", Email: ptr(client.Email("ada@example.com"))}
	first := must[*client.User](t)(c.CreateUser(ctx, body))
	again := must[*client.User](t)(c.CreateUser(ctx, body)) // without the key: 409 (the email is taken)
	if again.UserId != first.UserId {
		t.Fatalf("the retry created %s, want the stored %s", again.UserId, first.UserId)
	}
	_, err := c.CreateUser(context.Background(), body)
	refused(t, err, http.StatusConflict)
	body.Name = "Ada King"
	_, err = c.CreateUser(ctx, body)
	var v *client.ValidationError
	if errors.As(err, &v) {
		t.Fatalf("a reused key answered as a validation error: %v", err)
	}
	refused(t, err, http.StatusUnprocessableEntity)
}

// TestErrorText: the typed errors say what was refused.
func TestErrorText(t *testing.T) {
	s := newServer(t)
	c := s.client(t, client.Platform(s.plain.PlatformID.String(), s.plain.Secret))
	rows := client.ListUsersJSONBodyRowsPerPage(15) // not one of 10, 20, 50, 100
	_, err := c.ListUsers(context.Background(), client.ListUsersJSONRequestBody{RowsPerPage: &rows, PageNo: ptr[int64](0)})
	const want = "payments: 422: invalid request: body.rows_per_page: Input should be 10, 20, 50 or 100; body.page_no: Input should be greater than or equal to 1"
	if err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	_, err = c.GetUser(context.Background(), uuid.MustParse(unknown))
	if err == nil || err.Error() != "payments: 404: User not found." {
		t.Errorf("error %q", err)
	}
}

// TestEmailCheckedBeforeSending: an email net/mail does not parse is refused by the
// generated type before any request is sent (the server would answer 422).
func TestEmailCheckedBeforeSending(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent.Add(1) }))
	defer srv.Close()
	c, err := client.New(srv.URL, client.Platform(unknown, "secret"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateUser(context.Background(), client.CreateUserJSONRequestBody{Name: "Ada", Email: ptr(client.Email("not an email"))})
	if n := sent.Load(); !errors.Is(err, types.ErrValidationEmail) || n != 0 {
		t.Errorf("error %v after %d requests, want types.ErrValidationEmail before any", err, n)
	}
}

// TestSignedAsSent: the signature covers the request target as the transport writes it
// (an escaped path, a query) and the body as sent, and a caller's editor that changes the
// query runs before the signature.
func TestSignedAsSent(t *testing.T) {
	const secret = "s3cret"
	var (
		mu       sync.Mutex
		problems []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		if got, want := r.Header.Get("X-Signature"), signing.Sign(secret, r.Method, r.RequestURI, body); got != want {
			problems = append(problems, r.Method+" "+r.RequestURI+": signature "+got+", want "+want)
		}
		if r.URL.Query().Get("edited") != "yes" {
			problems = append(problems, r.RequestURI+": the editor's query is not there")
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	edit := client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		q := r.URL.Query()
		q.Set("edited", "yes")
		r.URL.RawQuery = q.Encode()
		return nil
	})
	c, err := client.New(srv.URL, client.Platform(unknown, secret), edit)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = c.GetPayeeRules(ctx, "IN", "INR")
	refused418(t, err)
	_, err = c.CreateUser(ctx, client.CreateUserJSONRequestBody{Name: "Ada Lovelace"})
	refused418(t, err)
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
}

func refused418(t *testing.T, err error) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) || e.StatusCode != http.StatusTeapot || e.Message != http.StatusText(http.StatusTeapot) {
		t.Errorf("error %v, want an *Error of 418 with its status text", err)
	}
}

package httpserver_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/pgtest"
)

// Every route that changes something runs its operation under the request's
// Idempotency-Key: sent twice with one key, the second request gets the first answer
// back byte for byte, marked replayed, although the clock has moved between them (the
// answer shows the first call's time). (A route that forgot the key would run again:
// another id, or the same refusal without the mark.)
func TestIdempotencyEveryRoute(t *testing.T) {
	ctx := context.Background()
	var clock atomic.Int64 // seconds past start; each request moves it on by 7
	start := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	dsn, keyFile := pgtest.NewStore(t)
	svc, err := payments.Open(ctx, dsn, payments.Options{KeyFile: keyFile,
		Now: func() time.Time { return start.Add(time.Duration(clock.Load()) * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	platform, err := svc.CreatePlatform(ctx, "Probe", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	h := httpserver.NewWithOptions(svc, nil, unlimited)
	user, err := svc.CreateUser(ctx, platform.PlatformID, payments.NewUser{Name: "Ada", Email: new("ada@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	key, err := svc.CreateAPIKey(ctx, user.UserID.String())
	if err != nil {
		t.Fatal(err)
	}
	caller, err := svc.AuthenticateAPIKey(ctx, key.APIKey.String(), key.APISecret)
	if err != nil {
		t.Fatal(err)
	}
	payee, err := svc.CreatePayee(ctx, caller, payments.NewPayee{Name: "Ravi"})
	if err != nil {
		t.Fatal(err)
	}
	userID, payeeID, unknown := user.UserID.String(), payee.PayeeID.String(), uuid.NewString()
	for _, tt := range []struct {
		name, method, target, body string
		userAPI                    bool
		status                     int // of both answers
	}{
		{"Create Payee", "POST", "/api/user-api/payee/create", `{"name":"Priya Patel"}`, true, 200},
		{"Update Payee", "PUT", "/api/platform/payee/update/" + userID, `{"payee_id":"` + payeeID + `","name":"Ravi K."}`, false, 200},
		{"Create User", "POST", "/api/platform/users/create", `{"name":"Bob","email":"bob@example.com"}`, false, 200},
		{"Add Bank Account", "POST", "/api/platform/accounts/add-account", `{"user_id":"` + userID + `","bank_name":"Chase",` +
			`"account_number":"123456789","routing_number":"021000021","account_type":"PERSONAL_CHECKING"}`, false, 200},
		{"Delete Card", "DELETE", "/api/platform/card/delete/" + userID, `{"card_id":"` + unknown + `"}`, false, 404},
		{"Add Payee Bank", "POST", "/api/platform/cross-border/payee/bank/" + userID, `{"payee_id":"` + payeeID + `","account_number":"123456789012",` +
			`"country":"IN","bank_acc_type":"savings","identifier_value":"HDFC0001234"}`, false, 200},
		{"Delete Payee Bank", "DELETE", "/api/platform/cross-border/payee/bank/" + userID + "/" + unknown, "", false, 404},
		{"Create Webhook Endpoint", "POST", "/api/platform/webhooks/create", `{"url":"https://hooks.example.com/x","events":["user.created"]}`, false, 200},
		{"Delete Webhook Endpoint", "DELETE", "/api/platform/webhooks/delete/" + unknown, "", false, 404},
	} {
		t.Run(tt.name, func(t *testing.T) {
			send := func() *httptest.ResponseRecorder {
				var body []byte
				if tt.body != "" {
					body = []byte(tt.body)
				}
				req := httptest.NewRequest(tt.method, tt.target, bytes.NewReader(body))
				if tt.userAPI {
					req.Header.Set(payments.HeaderAPIKey, key.APIKey.String())
					req.Header.Set(payments.HeaderAPISecret, key.APISecret)
				} else {
					req.Header.Set(payments.HeaderPlatformID, platform.PlatformID.String())
					req.Header.Set(payments.HeaderSignature, payments.Sign(platform.Secret, tt.method, tt.target, body))
				}
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				req.Header.Set("Idempotency-Key", "once")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				clock.Add(7)
				return rec
			}
			first, again := send(), send()
			if first.Code != tt.status || first.Header().Get("Idempotent-Replayed") != "" {
				t.Fatalf("first: %d %s, replayed %q; want %d", first.Code, first.Body, first.Header().Get("Idempotent-Replayed"), tt.status)
			}
			if again.Code != first.Code || again.Body.String() != first.Body.String() || again.Header().Get("Idempotent-Replayed") != "true" {
				t.Errorf("again: %d %s, replayed %q; want the first answer replayed: %s", again.Code, again.Body, again.Header().Get("Idempotent-Replayed"), first.Body)
			}
			if !equalHeaders(again.Header(), first.Header(), "Idempotent-Replayed", "X-Request-Id") {
				t.Errorf("again: headers %v; first %v", again.Header(), first.Header())
			}
		})
	}
}

// equalHeaders reports whether a and b are equal but for the headers named in except.
func equalHeaders(a, b http.Header, except ...string) bool {
	a, b = a.Clone(), b.Clone()
	for _, name := range except {
		a.Del(name)
		b.Del(name)
	}
	return maps.EqualFunc(a, b, func(x, y []string) bool { return fmt.Sprint(x) == fmt.Sprint(y) })
}

// BenchmarkIdempotency measures what an Idempotency-Key costs a create (the lookup, and the
// outcome stored in the create's transaction) beside the same create without a key, and
// what a replay costs.
//
//	go test -run '^$' -bench Idempotency -benchmem ./httpserver
func BenchmarkIdempotency(b *testing.B) {
	h, platform := hostileServer(b)
	created := 0
	create := func(b *testing.B, key string) *httptest.ResponseRecorder {
		created++
		req := signedCreateUser(platform, fmt.Appendf(nil, `{"name":"Bench User","email":"bench%d@example.com"}`, created))
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
		return rec
	}
	b.Run("create-without-key", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			create(b, "")
		}
	})
	b.Run("create-with-key", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			create(b, fmt.Sprintf("key-%d-%d", b.N, i))
		}
	})
	b.Run("replay", func(b *testing.B) {
		body := []byte(`{"name":"Replayed","email":"replayed@example.com"}`)
		send := func() *httptest.ResponseRecorder {
			req := signedCreateUser(platform, body)
			req.Header.Set("Idempotency-Key", "replayed")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		send()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if rec := send(); rec.Code != http.StatusOK || rec.Header().Get("Idempotent-Replayed") != "true" {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
	})
}

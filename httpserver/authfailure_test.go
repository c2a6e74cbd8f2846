package httpserver_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/pgtest"
)

// Issue 30: why authentication refused a request is the operator's to know (the access
// log's auth_failure and payments_auth_failures_total{reason}), never the caller's.

// refusals is a service on a fixed clock with a platform of each scheme, one of the other
// environment, and an API key of each environment.
type refusals struct {
	svc                         *payments.Service
	now                         time.Time
	plain, stamped, otherEnv    payments.PlatformCredentials
	key, otherEnvKey            payments.APIKey
	rates, createUser, payee    string // targets
	userBody, payeeBody         []byte
	invalidCredentials, missing string // bodies of today's 401s (missing: of a header %s)
}

func newRefusals(t *testing.T) *refusals {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	dsn, keyFile := pgtest.NewStore(t)
	svc, err := payments.Open(ctx, dsn, payments.Options{KeyFile: keyFile, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	x := &refusals{svc: svc, now: now,
		rates: "/api/platform/cross-border/rates?payout_currency=INR", createUser: "/api/platform/users/create",
		payee: "/api/user-api/payee/create", userBody: []byte(`{"name":"Ada Lovelace","email":"ada@example.com"}`),
		payeeBody: []byte(`{"name":"Bob","email":"bob@example.com"}`)}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	x.plain, err = svc.CreatePlatform(ctx, "Plain", payments.Sandbox)
	must(err)
	x.stamped, err = svc.CreatePlatform(ctx, "Stamped", payments.Sandbox, payments.PlatformOptions{RequireTimestamp: true})
	must(err)
	x.otherEnv, err = svc.CreatePlatform(ctx, "Live", payments.Production)
	must(err)
	keyOf := func(p payments.PlatformCredentials, name string) payments.APIKey {
		email := strings.ToLower(name) + "@example.com"
		u, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: name, Email: &email})
		must(err)
		k, err := svc.CreateAPIKey(ctx, u.UserID.String())
		must(err)
		return k
	}
	x.otherEnvKey = keyOf(x.otherEnv, "Liv")
	x.key = keyOf(x.plain, "Kay")
	// Today's answers, written out: every refusal but a named header is the first, byte
	// for byte, whatever the reason.
	at := strconv.FormatInt(now.Unix(), 10)
	x.invalidCredentials = `{"success":false,"message":"Invalid credentials.","data":null,"queryGeneratedTime":` + at + "}\n"
	x.missing = `{"success":false,"message":"Missing header %s.","data":null,"queryGeneratedTime":` + at + "}\n"
	return x
}

// platformRequest is a platform request with the headers given ("" leaves one out).
func platformRequest(method, target string, body []byte, id, sig, ts string) *http.Request {
	req := httptest.NewRequest(method, target, strings.NewReader(string(body)))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, v := range map[string]string{payments.HeaderPlatformID: id, payments.HeaderSignature: sig, payments.HeaderTimestamp: ts} {
		if v != "" {
			req.Header.Set(name, v)
		}
	}
	return req
}

// keyRequest is Create Payee with the API key and secret given ("" leaves one out).
func (x *refusals) keyRequest(key, secret string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, x.payee, strings.NewReader(string(x.payeeBody)))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(payments.HeaderAPIKey, key)
	}
	if secret != "" {
		req.Header.Set(payments.HeaderAPISecret, secret)
	}
	return req
}

// TestAuthFailureReasons: each reason authentication refuses for, sent through the real
// handler, is answered as before (the same 401, byte for byte, whatever the reason), named
// on the request's access log line as auth_failure, and counted by reason; an accepted
// request's line names none and counts nothing.
func TestAuthFailureReasons(t *testing.T) {
	x := newRefusals(t)
	ts := func(offset int64) string { return strconv.FormatInt(x.now.Unix()+offset, 10) }
	get := func(id, sig, ts string) *http.Request {
		return platformRequest(http.MethodGet, x.rates, nil, id, sig, ts)
	}
	post := func(id, sig, ts string) *http.Request {
		return platformRequest(http.MethodPost, x.createUser, x.userBody, id, sig, ts)
	}
	plainID, stampedID := x.plain.PlatformID.String(), x.stamped.PlatformID.String()
	getSig := payments.Sign(x.plain.Secret, http.MethodGet, x.rates, nil)
	postSig := payments.Sign(x.plain.Secret, http.MethodPost, x.createUser, x.userBody)
	stampedSig := func(ts string) string {
		return payments.SignTimestamped(x.stamped.Secret, http.MethodPost, x.createUser, x.userBody, ts)
	}
	key, secret := x.key.APIKey.String(), x.key.APISecret
	header := func(name string) string { return strings.Replace(x.missing, "%s", name, 1) }

	for _, tc := range []struct {
		name   string
		req    *http.Request
		reason payments.AuthFailure // "": accepted
		body   string               // "": Invalid credentials.
	}{
		{"OKGet", get(plainID, getSig, ""), "", ""},
		{"OKPost", post(plainID, postSig, ""), "", ""},
		{"OKStamped", post(stampedID, stampedSig(ts(0)), ts(0)), "", ""},
		{"OKAPIKey", x.keyRequest(key, secret), "", ""},

		{"MissingPlatformID", get("", getSig, ""), payments.AuthFailureMissingPlatformID, header(payments.HeaderPlatformID)},
		{"MissingSignature", get(plainID, "", ""), payments.AuthFailureMissingSignature, header(payments.HeaderSignature)},
		{"MalformedPlatformID", get("platform-1", getSig, ""), payments.AuthFailureMalformedPlatformID, ""},
		{"MalformedSignatureNotHex", get(plainID, "not hex at all", ""), payments.AuthFailureMalformedSignature, ""},
		{"MalformedSignatureShort", get(plainID, getSig[:32], ""), payments.AuthFailureMalformedSignature, ""},
		{"MalformedSignatureBase64", get(plainID, "q1+bZ8ExQm4rYiG1eAV0tVqQZ0J3bn8ZfXU8r2tZ6G8=", ""), payments.AuthFailureMalformedSignature, ""},
		{"UnknownPlatform", get(uuid.NewString(), getSig, ""), payments.AuthFailureUnknownPlatform, ""},
		{"WrongEnvironment", get(x.otherEnv.PlatformID.String(), payments.Sign(x.otherEnv.Secret, http.MethodGet, x.rates, nil), ""),
			payments.AuthFailureWrongEnvironment, ""},
		{"WrongEnvironmentWrongSecret", get(x.otherEnv.PlatformID.String(), getSig, ""), payments.AuthFailureWrongEnvironment, ""},
		{"TimestampNotSigned", post(stampedID, payments.Sign(x.stamped.Secret, http.MethodPost, x.createUser, x.userBody), ts(0)),
			payments.AuthFailureTimestampNotSigned, ""},
		{"TimestampNotRequired", post(plainID, payments.SignTimestamped(x.plain.Secret, http.MethodPost, x.createUser, x.userBody, ts(0)), ts(0)),
			payments.AuthFailureTimestampNotRequired, ""},
		{"BadSignatureWrongSecret", get(plainID, payments.Sign(x.stamped.Secret, http.MethodGet, x.rates, nil), ""), payments.AuthFailureBadSignature, ""},
		{"BadSignatureOtherQuery", get(plainID, payments.Sign(x.plain.Secret, http.MethodGet, "/api/platform/cross-border/rates", nil), ""),
			payments.AuthFailureBadSignature, ""},
		{"BadSignatureBodyNewline", post(plainID, payments.Sign(x.plain.Secret, http.MethodPost, x.createUser, append(x.userBody, '\n')), ""),
			payments.AuthFailureBadSignature, ""},
		{"BadSignatureStamped", post(stampedID, stampedSig(ts(1)), ts(0)), payments.AuthFailureBadSignature, ""},
		{"MissingTimestamp", post(stampedID, payments.Sign(x.stamped.Secret, http.MethodPost, x.createUser, x.userBody), ""),
			payments.AuthFailureMissingTimestamp, header(payments.HeaderTimestamp)},
		{"MalformedTimestamp", post(stampedID, stampedSig("yesterday"), "yesterday"), payments.AuthFailureMalformedTimestamp,
			`{"success":false,"message":"Malformed header X-Timestamp: want Unix seconds.","data":null,"queryGeneratedTime":` + ts(0) + "}\n"},
		{"StaleTimestamp", post(stampedID, stampedSig(ts(-301)), ts(-301)), payments.AuthFailureStaleTimestamp,
			`{"success":false,"message":"Request timestamp outside the allowed window.","data":null,"queryGeneratedTime":` + ts(0) + "}\n"},

		{"MissingAPIKey", x.keyRequest("", secret), payments.AuthFailureMissingAPIKey, header(payments.HeaderAPIKey)},
		{"MissingAPISecret", x.keyRequest(key, ""), payments.AuthFailureMissingAPISecret, header(payments.HeaderAPISecret)},
		{"MalformedAPIKey", x.keyRequest("key-1", secret), payments.AuthFailureMalformedAPIKey, ""},
		{"UnknownAPIKey", x.keyRequest(uuid.NewString(), secret), payments.AuthFailureUnknownAPIKey, ""},
		{"WrongEnvironmentAPIKey", x.keyRequest(x.otherEnvKey.APIKey.String(), x.otherEnvKey.APISecret), payments.AuthFailureWrongEnvironment, ""},
		{"BadAPISecret", x.keyRequest(key, x.otherEnvKey.APISecret), payments.AuthFailureBadAPISecret, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger, log := newLog()
			metrics := httpserver.NewMetrics(x.svc)
			h := httpserver.NewWithOptions(x.svc, logger, httpserver.Options{Metrics: metrics, MetricsApart: true})
			tc.req.Header.Set("X-Request-ID", "req-"+tc.name)
			rec := serve(h, tc.req)
			line := log.one(t, "request")
			scrape := serve(metrics.Handler(), httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String()
			counted := regexp.MustCompile(`(?m)^payments_auth_failures_total.*$`).FindAllString(scrape, -1)

			if tc.reason == "" {
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				if v, ok := line["auth_failure"]; ok {
					t.Errorf("accepted request logged with auth_failure %v", v)
				}
				if len(counted) != 0 {
					t.Errorf("accepted request counted: %q", counted)
				}
				return
			}

			// (a) The answer, byte for byte.
			want := tc.body
			if want == "" {
				want = x.invalidCredentials
			}
			if rec.Code != http.StatusUnauthorized || rec.Body.String() != want {
				t.Errorf("answered %d %q, want 401 %q", rec.Code, rec.Body, want)
			}
			wantHeader := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req-" + tc.name}}
			if len(rec.Header()) != len(wantHeader) {
				t.Errorf("headers %v, want %v", rec.Header(), wantHeader)
			}
			for name, v := range wantHeader {
				if got := rec.Header().Values(name); len(got) != 1 || got[0] != v[0] {
					t.Errorf("%s: %q, want %q", name, got, v)
				}
			}

			// (b) The access log line names the reason and nothing the request sent.
			wantLogged(t, line, map[string]any{"auth_failure": string(tc.reason), "status": float64(http.StatusUnauthorized),
				"request_id": "req-" + tc.name})
			for _, sent := range []string{payments.HeaderSignature, payments.HeaderAPISecret} {
				if v := tc.req.Header.Get(sent); v != "" && strings.Contains(log.text(), v) {
					t.Errorf("the log shows the %s: %s", sent, log.text())
				}
			}

			// (c) Counted once, under its reason alone.
			wantCounted := `payments_auth_failures_total{reason="` + string(tc.reason) + `"} 1`
			if len(counted) != 1 || counted[0] != wantCounted {
				t.Errorf("metrics %q, want %q", counted, wantCounted)
			}
		})
	}
}

// TestAuthFailureJSONLog: through JSONLogHandler (paymentsd serve's logger, whose access
// log lines take the handler's own path) the line ends with the reason.
func TestAuthFailureJSONLog(t *testing.T) {
	x := newRefusals(t)
	var out logLines
	h := httpserver.NewWithOptions(x.svc, slog.New(httpserver.JSONLogHandler(&out, slog.LevelInfo)), unlimited)
	req := platformRequest(http.MethodGet, x.rates, nil, uuid.NewString(), payments.Sign(x.plain.Secret, http.MethodGet, x.rates, nil), "")
	req.Header.Set("X-Request-ID", "req-1")
	if rec := serve(h, req); rec.Code != http.StatusUnauthorized {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if line := out.text(); !strings.HasSuffix(line, `,"request_id":"req-1","auth_failure":"unknown_platform"}`+"\n") {
		t.Errorf("logged %q", line)
	}
}

// TestAuthFailureThrottled: the failure throttle counts refusals as before. A failure it
// answers 429 instead of 401 is still logged with its reason; a request it refuses before
// authentication has none.
func TestAuthFailureThrottled(t *testing.T) {
	x := newRefusals(t)
	logger, log := newLog()
	metrics := httpserver.NewMetrics(x.svc)
	h := httpserver.NewWithOptions(x.svc, logger, httpserver.Options{AuthFailures: 2, Metrics: metrics, MetricsApart: true})
	wrong := payments.Sign("not-the-secret", http.MethodGet, x.rates, nil)
	// The platform id's budget is spent from two addresses; a third may try once.
	for i, want := range []struct {
		addr   string
		status int
		reason any // nil: none logged
	}{
		{"198.51.100.1:1", http.StatusUnauthorized, "bad_signature"},
		{"198.51.100.2:1", http.StatusUnauthorized, "bad_signature"},
		{attacker, http.StatusTooManyRequests, "bad_signature"}, // authenticated, then over the budget
		{attacker, http.StatusTooManyRequests, nil},             // refused before authentication
	} {
		req := platformRequest(http.MethodGet, x.rates, nil, x.plain.PlatformID.String(), wrong, "")
		req.RemoteAddr = want.addr
		if rec := serve(h, req); rec.Code != want.status {
			t.Fatalf("request %d: status %d, want %d: %s", i, rec.Code, want.status, rec.Body)
		}
		lines := log.records(t, "request")
		if got := lines[len(lines)-1]["auth_failure"]; got != want.reason {
			t.Errorf("request %d: auth_failure %v, want %v", i, got, want.reason)
		}
	}
	scrape := serve(metrics.Handler(), httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String()
	for _, want := range []string{`payments_auth_failures_total{reason="bad_signature"} 3`, `payments_rate_limited_total{limit="auth_failures"} 2`} {
		if !strings.Contains(scrape, want+"\n") {
			t.Errorf("no %q in the metrics", want)
		}
	}
}

package httpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/hostile"
	"github.com/platform-payments/payments/internal/pgtest"
)

// What the most expensive bodies of at most MaxBodyBytes cost (package hostile makes them):
// one pass over the body, and a 422 built in O(n log n) of its entries.
//
//	go test -run '^$' -bench Hostile -benchmem ./httpserver

// hostileServer is a handler over a fresh store with one platform, without the limits.
func hostileServer(tb testing.TB) (http.Handler, payments.PlatformCredentials) {
	svc, platform := freshService(tb)
	return httpserver.NewWithOptions(svc, nil, unlimited), platform
}

// freshService is a service over a fresh store with one platform.
func freshService(tb testing.TB) (*payments.Service, payments.PlatformCredentials) {
	tb.Helper()
	ctx := context.Background()
	dsn, keyFile := pgtest.NewStore(tb)
	svc, err := payments.Open(ctx, dsn, payments.Options{KeyFile: keyFile})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close() })
	platform, err := svc.CreatePlatform(ctx, "Probe", payments.Sandbox)
	if err != nil {
		tb.Fatal(err)
	}
	return svc, platform
}

func signedCreateUser(platform payments.PlatformCredentials, body []byte) *http.Request {
	const target = "/api/platform/users/create"
	req := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	req.Header.Set(payments.HeaderPlatformID, platform.PlatformID.String())
	req.Header.Set(payments.HeaderSignature, payments.Sign(platform.Secret, http.MethodPost, target, body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

// BenchmarkHostile sends each hostile body through the handler, beside a small invalid body
// (the baseline: the cost of an ordinary 422) in the same run.
func BenchmarkHostile(b *testing.B) {
	h, platform := hostileServer(b)
	bodies := append([]hostile.Body{{Name: "baseline", Body: []byte(`{"name":"","email":"ada@example.com"}`)}},
		hostile.Bodies(httpserver.MaxBodyBytes)...)
	for _, hb := range bodies {
		b.Run(hb.Name, func(b *testing.B) {
			b.SetBytes(int64(len(hb.Body)))
			b.ReportAllocs()
			for range b.N {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, signedCreateUser(platform, hb.Body))
				if rec.Code != http.StatusUnprocessableEntity {
					b.Fatalf("%d %.200s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkAuthTiming measures, interleaved in one run, what a request costs that fails
// authentication for an unknown platform id (a new one each time) and for a known id with
// a wrong signature, of a platform of the specification's scheme and of one that requires
// signed timestamps, each without and with X-Timestamp (-ts), beside good requests; and
// on the user-API route, an unknown key beside a known key with a wrong secret. It
// reports the median of each: an unknown id must not be measurably slower (or faster)
// than a known one, whatever the platform requires.
func BenchmarkAuthTiming(b *testing.B) {
	ctx := context.Background()
	svc, platform := freshService(b)
	stamped, err := svc.CreatePlatform(ctx, "Stamped", payments.Sandbox, payments.PlatformOptions{RequireTimestamp: true})
	if err != nil {
		b.Fatal(err)
	}
	email := "ada@example.com"
	user, err := svc.CreateUser(ctx, platform.PlatformID, payments.NewUser{Name: "Ada", Email: &email})
	if err != nil {
		b.Fatal(err)
	}
	key, err := svc.CreateAPIKey(ctx, user.UserID.String())
	if err != nil {
		b.Fatal(err)
	}
	h := httpserver.NewWithOptions(svc, nil, unlimited)
	target := "/api/platform/users/get/" + user.UserID.String()
	good := payments.Sign(platform.Secret, http.MethodGet, target, nil)
	wrong := payments.Sign("not-the-secret", http.MethodGet, target, nil)
	platformRequest := func(id, sig string) *http.Request {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set(payments.HeaderPlatformID, id)
		req.Header.Set(payments.HeaderSignature, sig)
		return req
	}
	// stampedRequest sends a fresh X-Timestamp, signed with secret.
	stampedRequest := func(id, secret string) *http.Request {
		ts := payments.Timestamp(time.Now())
		req := platformRequest(id, payments.SignTimestamped(secret, http.MethodGet, target, nil, ts))
		req.Header.Set(payments.HeaderTimestamp, ts)
		return req
	}
	keyRequest := func(apiKey string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/api/user-api/payee/create", strings.NewReader(`{"name":"Bob"}`))
		req.Header.Set(payments.HeaderAPIKey, apiKey)
		req.Header.Set(payments.HeaderAPISecret, "not-the-secret")
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	kinds := []struct {
		name    string
		status  int
		request func() *http.Request
	}{
		{"good", http.StatusOK, func() *http.Request { return platformRequest(platform.PlatformID.String(), good) }},
		// Past authentication, the user is another platform's: 404, as the contract says.
		{"good-stamped-ts", http.StatusNotFound, func() *http.Request { return stampedRequest(stamped.PlatformID.String(), stamped.Secret) }},
		{"unknown-platform", http.StatusUnauthorized, func() *http.Request { return platformRequest(uuid.NewString(), wrong) }},
		{"wrong-signature", http.StatusUnauthorized, func() *http.Request { return platformRequest(platform.PlatformID.String(), wrong) }},
		{"wrong-signature-stamped", http.StatusUnauthorized, func() *http.Request { return platformRequest(stamped.PlatformID.String(), wrong) }},
		{"unknown-platform-ts", http.StatusUnauthorized, func() *http.Request { return stampedRequest(uuid.NewString(), "not-the-secret") }},
		{"wrong-signature-ts", http.StatusUnauthorized, func() *http.Request { return stampedRequest(platform.PlatformID.String(), "not-the-secret") }},
		{"wrong-signature-stamped-ts", http.StatusUnauthorized, func() *http.Request { return stampedRequest(stamped.PlatformID.String(), "not-the-secret") }},
		{"wrong-api-secret", http.StatusUnauthorized, func() *http.Request { return keyRequest(key.APIKey.String()) }},
		{"unknown-api-key", http.StatusUnauthorized, func() *http.Request { return keyRequest(uuid.NewString()) }},
	}
	samples := make([][]time.Duration, len(kinds))
	// Each round sends every kind once, in a new random order: a request runs a little
	// slower after some kinds than after others, and that must not be charged to one kind.
	rng := rand.New(rand.NewPCG(1, 2))
	round := make([]int, len(kinds))
	b.ResetTimer()
	for i := range b.N {
		if i%len(kinds) == 0 {
			for j := range round {
				round[j] = j
			}
			rng.Shuffle(len(round), func(a, b int) { round[a], round[b] = round[b], round[a] })
		}
		k := round[i%len(kinds)]
		req := kinds[k].request()
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		samples[k] = append(samples[k], time.Since(start))
		if rec.Code != kinds[k].status {
			b.Fatalf("%s: %d %s", kinds[k].name, rec.Code, rec.Body)
		}
	}
	b.StopTimer()
	for k, kind := range kinds {
		if len(samples[k]) == 0 {
			continue
		}
		slices.Sort(samples[k])
		b.ReportMetric(float64(samples[k][len(samples[k])/2].Nanoseconds()), kind.name+"-ns/median")
	}
}

// Each hostile body gets the 422 a client of the contract expects, however large.
func TestHostileBodies(t *testing.T) {
	h, platform := hostileServer(t)
	type entry struct {
		Type string `json:"type"`
		Loc  []any  `json:"loc"`
		Ctx  any    `json:"ctx"`
	}
	for _, hb := range hostile.Bodies(httpserver.MaxBodyBytes) {
		t.Run(hb.Name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, signedCreateUser(platform, hb.Body))
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("%d %.200s", rec.Code, rec.Body)
			}
			var got struct{ Detail []entry }
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			locs := make([]string, len(got.Detail))
			for i, e := range got.Detail {
				locs[i] = fmt.Sprint(e.Type, e.Loc)
			}
			switch hb.Name {
			case "nesting", "nesting-closed": // one entry, where level 33 opens
				want := `[{"type":"json_invalid","loc":["body",32],"ctx":{"error":"Nesting deeper than 32 levels"}}]`
				if b, _ := json.Marshal(got.Detail); string(b) != want {
					t.Errorf("detail %s, want %s", b, want)
				}
			case "unknown-keys": // one entry per key, in the order written
				keys := 0
				for i, e := range got.Detail {
					want := []any{"body", strconv.FormatInt(int64(i), 36)}
					if e.Type != "extra_forbidden" || fmt.Sprint(e.Loc) != fmt.Sprint(want) {
						t.Fatalf("entry %d: %s %v, want extra_forbidden %v", i, e.Type, e.Loc, want)
					}
					keys++
				}
				if want := bytes.Count(hb.Body, []byte(":")) - 2; keys != want {
					t.Errorf("%d entries, want %d", keys, want)
				}
			case "long-string", "lone-surrogates": // length before the text rule
				if want := "[string_too_long[body name]]"; fmt.Sprint(locs) != want {
					t.Errorf("entries %v, want %s", locs, want)
				}
			case "many-fields": // the last of each duplicate is the value read
				want := "[string_type[body name] string_type[body email] string_type[body phone_country_code] string_type[body phone]]"
				if fmt.Sprint(locs) != want {
					t.Errorf("entries %v, want %s", locs, want)
				}
			default:
				t.Fatalf("no expectation for %s", hb.Name)
			}
		})
	}
}

// BenchmarkUnknownKeys shows the cost of a 422 growing with its entries: a body of n unknown
// keys, n from 1,000 to 8,000. ns/key stays about level: O(n log n), not O(n^2).
func BenchmarkUnknownKeys(b *testing.B) {
	h, platform := hostileServer(b)
	for _, n := range []int{1000, 2000, 4000, 8000} {
		var body bytes.Buffer
		body.WriteString(`{"name":"Ada","email":"ada@example.com"`)
		for i := range n {
			fmt.Fprintf(&body, `,"%s":0`, strconv.FormatInt(int64(i), 36))
		}
		body.WriteString("}")
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, signedCreateUser(platform, body.Bytes()))
				if rec.Code != http.StatusUnprocessableEntity {
					b.Fatalf("%d %.200s", rec.Code, rec.Body)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
		})
	}
}

package httpserver_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
)

// The most expensive Create User bodies of at most MaxBodyBytes an outside probe found, and
// what each must cost: one pass over the body, and a 422 built in O(n log n) of its entries.
//
//	go test -run '^$' -bench Hostile -benchmem ./httpserver

type hostileBody struct {
	name string
	body []byte
}

func hostileBodies() []hostileBody {
	const limit = httpserver.MaxBodyBytes
	fill := func(open, item func(i int) string, closing string) []byte {
		var b bytes.Buffer
		b.WriteString(open(0))
		for i := 0; ; i++ {
			next := item(i)
			if b.Len()+len(next)+len(closing) > limit {
				break
			}
			b.WriteString(next)
		}
		b.WriteString(closing)
		return b.Bytes()
	}
	sep := func(i int) string {
		if i == 0 {
			return ""
		}
		return ","
	}
	return []hostileBody{
		// 65,536 opening brackets: malformed and nested 65,536 deep.
		{"nesting", bytes.Repeat([]byte("["), limit)},
		// Well-formed but nested 32,768 deep (deeper than encoding/json reads).
		{"nesting-closed", []byte(strings.Repeat("[", limit/2) + strings.Repeat("]", limit/2))},
		// A valid user followed by ~9,000 distinct unknown keys: one 422 entry each.
		{"unknown-keys", fill(func(int) string { return `{"name":"Ada","email":"ada@example.com"` },
			func(i int) string { return `,"` + strconv.FormatInt(int64(i), 36) + `":0` }, "}")},
		// One name of 32,000 two-byte characters (64 KiB).
		{"long-string", fill(func(int) string { return `{"name":"` },
			func(int) string { return "é" }, `","email":"ada@example.com"}`)},
		// A name of ~10,900 escaped lone surrogates.
		{"lone-surrogates", fill(func(int) string { return `{"name":"` },
			func(int) string { return `\ud800` }, `","email":"ada@example.com"}`)},
		// The declared fields again and again, each of the wrong type, in a 64 KiB object.
		{"many-fields", fill(func(int) string { return `{` },
			func(i int) string {
				return sep(i) + `"name":[1,2,3],"email":{"a":1},"phone":false,"phone_country_code":[null]`
			}, "}")},
	}
}

// hostileServer is a handler over a fresh store with one platform.
func hostileServer(tb testing.TB) (http.Handler, payments.PlatformCredentials) {
	tb.Helper()
	ctx := context.Background()
	svc, err := payments.Open(ctx, filepath.Join(tb.TempDir(), "payments.db"), payments.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close() })
	platform, err := svc.CreatePlatform(ctx, "Probe", payments.Sandbox)
	if err != nil {
		tb.Fatal(err)
	}
	return httpserver.New(svc, nil), platform
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
	bodies := append([]hostileBody{{"baseline", []byte(`{"name":"","email":"ada@example.com"}`)}}, hostileBodies()...)
	for _, hb := range bodies {
		b.Run(hb.name, func(b *testing.B) {
			b.SetBytes(int64(len(hb.body)))
			b.ReportAllocs()
			for range b.N {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, signedCreateUser(platform, hb.body))
				if rec.Code != http.StatusUnprocessableEntity {
					b.Fatalf("%d %.200s", rec.Code, rec.Body)
				}
			}
		})
	}
}

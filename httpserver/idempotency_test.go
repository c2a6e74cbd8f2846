package httpserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

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

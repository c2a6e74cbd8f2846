package httpserver_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/pgtest"
)

// A database written by the version whose HTTP layer stored each keyed answer's rendering
// with its outcome (testdata/idempotency_v0: the SQLite file, gzipped, its data key, and
// the requests it was sent with the answers it gave) replays every one of those answers
// byte for byte, marked replayed.
func TestIdempotencyStoredByV0(t *testing.T) {
	if pgtest.Enabled() {
		t.Skip("a SQLite file")
	}
	dir := filepath.Join("testdata", "idempotency_v0")
	var fixture struct {
		PlatformID, PlatformSecret, APIKey, APISecret string
		At                                            time.Time
		Exchanges                                     []struct {
			Name, Method, Target, Body string
			UserAPI                    bool
			Status                     int
			Answer                     string
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "exchanges.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &fixture); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	db, keyFile := filepath.Join(tmp, "payments.db"), filepath.Join(tmp, "payments.key")
	gunzip(t, filepath.Join(dir, "payments.db.gz"), db)
	key, err := os.ReadFile(filepath.Join(dir, "payments.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	later := fixture.At.Add(time.Hour)
	svc, err := payments.Open(context.Background(), db, payments.Options{KeyFile: keyFile, Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	h := httpserver.New(svc, nil)
	for _, x := range fixture.Exchanges {
		var body []byte
		if x.Body != "" {
			body = []byte(x.Body)
		}
		req := httptest.NewRequest(x.Method, x.Target, bytes.NewReader(body))
		if x.UserAPI {
			req.Header.Set(payments.HeaderAPIKey, fixture.APIKey)
			req.Header.Set(payments.HeaderAPISecret, fixture.APISecret)
		} else {
			req.Header.Set(payments.HeaderPlatformID, fixture.PlatformID)
			req.Header.Set(payments.HeaderSignature, payments.Sign(fixture.PlatformSecret, x.Method, x.Target, body))
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Idempotency-Key", "legacy "+x.Name)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != x.Status || rec.Body.String() != x.Answer || rec.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s: %d %s, replayed %q; want %d %s replayed", x.Name, rec.Code, rec.Body, rec.Header().Get("Idempotent-Replayed"), x.Status, x.Answer)
		}
	}
}

// gunzip writes the gzipped file src to dst, uncompressed.
func gunzip(tb testing.TB, src, dst string) {
	tb.Helper()
	f, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, zr); err != nil {
		tb.Fatal(err)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments"
)

// logLines decodes the JSON log lines written so far.
func logLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// serve starts paymentsd serve with args; stop cancels it and returns its exit status.
func serve(t *testing.T, args ...string) (addr string, stderr *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	var stdout syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), strings.NewReader(""), &stdout, stderr)
	}()
	stop = func() int {
		cancel()
		select {
		case code := <-done:
			if stdout.String() != "" {
				t.Errorf("serve wrote %q on stdout", stdout.String())
			}
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop")
			return -1
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, stderr)
		default:
		}
		for _, l := range logLines(t, stderr.String()) {
			if l["msg"] == "listening" {
				return l["addr"].(string), stderr, stop
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	t.Fatalf("serve never logged listening: %s", stderr)
	return
}

func TestServe(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		db := tempDB(t)
		addr, stderr, stop := serve(t, "-db", db, "-addr", "127.0.0.1:0", "-env", "production")

		log := logLines(t, stderr.String())
		if note, _ := log[0]["msg"].(string); !strings.HasPrefix(note, "created a new data key file") ||
			log[0]["key_file"] != db+".key" || log[0]["level"] != "WARN" {
			t.Errorf("first log line %v, want the note that the key file was created", log[0])
		}
		if hint, _ := log[1]["msg"].(string); !strings.Contains(hint, "paymentsd platform create -db "+db+" -env production -name NAME") {
			t.Errorf("second log line %v, want the hint to create a platform", log[1])
		}
		listening := log[len(log)-1]
		if listening["environment"] != "production" || listening["url"] != "http://"+addr ||
			listening["timestamp_tolerance"] != "5m0s" || listening["data_key_id"] != log[0]["key_id"] {
			t.Errorf("listening line %v", listening)
		}

		resp, err := http.Get("http://" + addr + "/api/platform/users/get/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("status %d, want 401", resp.StatusCode)
		}

		if code := stop(); code != 0 {
			t.Errorf("exit status %d after shutdown, want 0: %s", code, stderr)
		}
		if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			t.Errorf("still listening on %s after stop", addr)
		}
	})

	t.Run("NoHintWithPlatform", func(t *testing.T) {
		db := tempDB(t)
		if r := runT(t, "", "platform", "create", "-db", db, "-name", "Acme"); r.code != 0 {
			t.Fatalf("platform create: %+v", r)
		}
		_, stderr, stop := serve(t, "-db", db, "-addr", "127.0.0.1:0")
		if code := stop(); code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
		if strings.Contains(stderr.String(), "platform create") {
			t.Errorf("hint printed although a platform exists: %s", stderr)
		}
	})

	// -timestamp-tolerance sets the window of the platforms that require timestamps.
	t.Run("TimestampTolerance", func(t *testing.T) {
		db := tempDB(t)
		r := runT(t, "", "platform", "create", "-db", db, "-require-timestamp", "-name", "Acme")
		if r.code != 0 {
			t.Fatalf("platform create: %+v", r)
		}
		var creds struct {
			PlatformID string `json:"platform_id"`
			Secret     string `json:"secret"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &creds); err != nil {
			t.Fatal(err)
		}
		addr, stderr, stop := serve(t, "-db", db, "-addr", "127.0.0.1:0", "-timestamp-tolerance", "30s")
		defer stop()
		log := logLines(t, stderr.String())
		if got := log[len(log)-1]["timestamp_tolerance"]; got != "30s" {
			t.Errorf("listening line: timestamp_tolerance %v, want 30s", got)
		}
		for _, tc := range []struct {
			offset int64
			code   int
		}{{-20, 0}, {20, 0}, {-40, 1}, {40, 1}} {
			at := strconv.FormatInt(time.Now().Unix()+tc.offset, 10)
			r := runT(t, "", "call", "-url", "http://"+addr, "-platform", creds.PlatformID, "-secret", creds.Secret,
				"-timestamp-at", at, "POST", "/api/platform/users/list", "{}")
			if r.code != tc.code {
				t.Errorf("%+d s: exit status %d, want %d: %s", tc.offset, r.code, tc.code, r.stdout)
			}
			if tc.code != 0 && !strings.Contains(r.stdout, "Request timestamp outside the allowed window.") {
				t.Errorf("%+d s: %s", tc.offset, r.stdout)
			}
		}
	})

	t.Run("Limits", func(t *testing.T) {
		db := tempDB(t)
		r := runT(t, "", "platform", "create", "-db", db, "-name", "Acme")
		var creds struct{ PlatformID, Secret string }
		if err := json.Unmarshal([]byte(r.stdout), &struct {
			PlatformID *string `json:"platform_id"`
			Secret     *string `json:"secret"`
		}{&creds.PlatformID, &creds.Secret}); err != nil || r.code != 0 {
			t.Fatalf("platform create: %+v %v", r, err)
		}
		addr, _, stop := serve(t, "-db", db, "-addr", "127.0.0.1:0", "-rate-limit", "0.01", "-rate-burst", "2", "-auth-failures", "2")
		defer stop()
		send := func(secret string) *http.Response {
			const target = "/api/platform/cross-border/rates?payout_currency=INR"
			req, err := http.NewRequest(http.MethodGet, "http://"+addr+target, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set(payments.HeaderPlatformID, creds.PlatformID)
			req.Header.Set(payments.HeaderSignature, payments.Sign(secret, http.MethodGet, target, nil))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		var got []string
		for _, secret := range []string{creds.Secret, creds.Secret, creds.Secret, "guess", "guess", "guess"} {
			resp := send(secret)
			got = append(got, fmt.Sprint(resp.StatusCode, " ", resp.Header.Get("Retry-After"), " ", resp.Header.Get("RateLimit-Remaining")))
		}
		// Two requests, the third over the limit (a token every 100 s); two failures, the
		// third refused before authentication (a failure back every 30 s).
		want := []string{"200  1", "200  0", "429 100 0", "401  ", "401  ", "429 30 0"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("answers %q, want %q", got, want)
		}
	})

	t.Run("ErrAddressInUse", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		r := runT(t, "", "serve", "-db", tempDB(t), "-addr", ln.Addr().String())
		if r.code != 1 || r.stdout != "" {
			t.Errorf("exit status %d, stdout %q; want 1 and nothing", r.code, r.stdout)
		}
		if last := strings.TrimSpace(r.stderr[strings.LastIndex(strings.TrimSpace(r.stderr), "\n")+1:]); !strings.HasPrefix(last, "paymentsd serve: ") {
			t.Errorf("stderr ends with %q, want the failure", last)
		}
	})

	t.Run("ErrTLSFiles", func(t *testing.T) {
		r := runT(t, "", "serve", "-db", tempDB(t), "-addr", "127.0.0.1:0", "-tls-cert", "absent.pem", "-tls-key", "absent.key")
		if r.code != 1 {
			t.Errorf("exit status %d, want 1", r.code)
		}
		wantOneLine(t, "stderr", r.stderr, "paymentsd serve: TLS certificate: ")
	})
}

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/internal/webhook/probe"
)

// startListen runs webhook listen -secret verify on a free loopback port and returns its
// URL; the test's end stops it.
func startListen(t *testing.T, verify string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"webhook", "listen", "-addr", "127.0.0.1:0", "-secret", verify}, strings.NewReader(""), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Error("webhook listen did not stop")
		}
	})
	listening := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			return m[1] + "/hook"
		}
	}
	t.Fatalf("no listening line; stderr: %s", stderr.String())
	return ""
}

// runProbe runs webhook probe with args and returns its exit status and results.
func runProbe(t *testing.T, args ...string) (int, []probe.Result, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	code := run(context.Background(), append([]string{"webhook", "probe", "-json"}, args...), strings.NewReader(""), &stdout, &stderr)
	var rs []probe.Result
	if code != exitUsage {
		if err := json.Unmarshal([]byte(stdout.String()), &rs); err != nil {
			t.Fatalf("exit %d, stdout %q: %v; stderr %s", code, stdout.String(), err, stderr.String())
		}
	}
	return code, rs, stderr.String()
}

// The probe against paymentsd webhook listen passes every case it can judge, with a
// whsec_ secret and with an ed25519 key (listen holding the whpk_); against a careless
// receiver, it names the cases it fails and exits 1.
func TestWebhookProbe(t *testing.T) {
	secret := webhook.NewSecret()
	ed := webhook.NewKey(true)
	edPublic, _ := ed.PublicKey()
	for _, c := range []struct{ name, sign, verify string }{
		{"v1", secret.Text(), secret.Text()},
		{"ed25519", ed.Text(), edPublic.Text()},
	} {
		t.Run("listen/"+c.name, func(t *testing.T) {
			url := startListen(t, c.verify)
			code, rs, stderr := runProbe(t, "-secret", c.sign, "-webhook-allow-cidr", "127.0.0.0/8", url)
			if code != exitOK || len(rs) != 10 {
				t.Fatalf("exit %d, %d results, stderr %s", code, len(rs), stderr)
			}
			for _, r := range rs {
				if r.Outcome != probe.Pass && !(r.Outcome == probe.CannotTell && r.Case == "same webhook-id processed once") {
					t.Errorf("%s: %s (%s)", r.Case, r.Outcome, r.Detail)
				}
			}
		})
	}

	t.Run("careless", func(t *testing.T) {
		// Answers 200 to anything, and reads 64 KiB at most.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			buf := make([]byte, 64<<10)
			n, _ := r.Body.Read(buf)
			_ = n
			w.WriteHeader(http.StatusOK)
		}))
		defer srv.Close()
		code, rs, stderr := runProbe(t, "-secret", secret.Text(), "-webhook-allow-cidr", "127.0.0.1/32", srv.URL)
		if code != exitFailure || !strings.Contains(stderr, "4 of 10 cases failed") {
			t.Fatalf("exit %d, stderr %q: want 1 and 4 failures", code, stderr)
		}
		var failed []string
		for _, r := range rs {
			if r.Outcome == probe.Fail {
				failed = append(failed, r.Case)
			}
		}
		want := []string{"timestamp 10 minutes old", "timestamp 10 minutes ahead", "wrong signature", "no signature"}
		if strings.Join(failed, ", ") != strings.Join(want, ", ") {
			t.Fatalf("failed %q, want %q", failed, want)
		}
	})

	t.Run("text, the range from the environment", func(t *testing.T) {
		t.Setenv(envAllowCIDR, "127.0.0.0/8")
		url := startListen(t, secret.Text())
		var stdout, stderr syncBuffer
		code := run(context.Background(), []string{"webhook", "probe", "-secret", secret.Text(), url}, strings.NewReader(""), &stdout, &stderr)
		if code != exitOK || !strings.Contains(stdout.String(), "pass         valid delivery: accepted (204)") ||
			!strings.Contains(stdout.String(), "cannot tell  same webhook-id processed once: ") || strings.Count(stdout.String(), "\n") != 10 {
			t.Fatalf("exit %d, stdout:\n%s\nstderr: %s", code, stdout.String(), stderr.String())
		}
	})
}

// Usage errors, before anything is sent: no URL, no key, a public key (it cannot sign),
// a URL the endpoint rules refuse, and a loopback receiver without -webhook-allow-cidr.
func TestWebhookProbeUsage(t *testing.T) {
	t.Setenv(envAllowCIDR, "")
	pub, _ := webhook.NewKey(true).PublicKey()
	secret := webhook.NewSecret().Text()
	for name, args := range map[string][]string{
		"no URL":        {"-secret", secret},
		"no secret":     {"http://127.0.0.1:9/hook"},
		"bad secret":    {"-secret", "not-a-secret", "http://127.0.0.1:9/hook"},
		"public key":    {"-secret", pub.Text(), "-webhook-allow-cidr", "127.0.0.0/8", "http://127.0.0.1:9/hook"},
		"ftp URL":       {"-secret", secret, "ftp://example.com/hook"},
		"loopback":      {"-secret", secret, "http://127.0.0.1:9/hook"}, // $PAYMENTS_WEBHOOK_ALLOW_CIDR unset below
		"bad timeout":   {"-secret", secret, "-timeout", "0s", "-webhook-allow-cidr", "127.0.0.0/8", "http://127.0.0.1:9/hook"},
		"two arguments": {"-secret", secret, "http://127.0.0.1:9/a", "http://127.0.0.1:9/b"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			code := run(context.Background(), append([]string{"webhook", "probe"}, args...), strings.NewReader(""), &stdout, &stderr)
			if code != exitUsage || stdout.String() != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q: want 2 and nothing sent", code, stdout.String(), stderr.String())
			}
			if name == "public key" && !strings.Contains(stderr.String(), "cannot sign") {
				t.Errorf("stderr %q does not say why", stderr.String())
			}
		})
	}
}

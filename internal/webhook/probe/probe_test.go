package probe_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/internal/webhook/egress"
	"github.com/platform-payments/payments/internal/webhook/probe"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func client(allow []netip.Prefix) *http.Client {
	return egress.NewClient(webhook.NewDialer(allow, 10*time.Second), 30*time.Second)
}

// receiver answers as decide says, after reading at most limit bytes of the body (a
// longer one is answered 413).
func receiver(t *testing.T, limit int64, decide func(h http.Header, body []byte) int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		w.WriteHeader(decide(r.Header, body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hook"
}

// verifying is a receiver that does what it should: Verify, 204 or 401.
func verifying(k webhook.Secret) func(http.Header, []byte) int {
	return func(h http.Header, body []byte) int {
		if err := webhook.Verify(k, h, body, 5*time.Minute, time.Now()); err != nil {
			return http.StatusUnauthorized
		}
		return http.StatusNoContent
	}
}

// outcomes maps each case to its outcome.
func outcomes(rs []probe.Result) map[string]string {
	m := map[string]string{}
	for _, r := range rs {
		m[r.Case] = r.Outcome
	}
	return m
}

// The probe against receivers that do and do not check what they should: each careless
// receiver fails exactly the cases of what it neglects, by name.
func TestProbe(t *testing.T) {
	secret := webhook.NewSecret()
	ed := webhook.NewKey(true)
	edPublic, _ := ed.PublicKey()
	cases := []struct {
		name  string
		key   webhook.Secret
		limit int64
		rcv   func(http.Header, []byte) int
		fails []string // the cases that fail; every other passes (but the one that cannot tell)
	}{
		{"careful, v1", secret, probe.LargeBody, verifying(secret), nil},
		{"careful, ed25519", ed, probe.LargeBody, verifying(edPublic), nil},
		{"accepts everything", secret, probe.LargeBody, func(http.Header, []byte) int { return http.StatusOK },
			[]string{"timestamp 10 minutes old", "timestamp 10 minutes ahead", "wrong signature", "no signature"}},
		{"ignores the timestamp", secret, probe.LargeBody, func(h http.Header, body []byte) int {
			sec, _ := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64) // judged at its own time
			if err := webhook.Verify(secret, h, body, 5*time.Minute, time.Unix(sec, 0)); err != nil {
				return http.StatusUnauthorized
			}
			return http.StatusOK
		}, []string{"timestamp 10 minutes old", "timestamp 10 minutes ahead"}},
		{"checks the first signature only", secret, probe.LargeBody, func(h http.Header, body []byte) int {
			first, _, _ := strings.Cut(h.Get("webhook-signature"), " ")
			h.Set("webhook-signature", first)
			return verifying(secret)(h, body)
		}, []string{"valid signature beside a stale one", "unknown v2 signature beside a valid one"}},
		{"64 KiB body limit", secret, 64 << 10, verifying(secret), []string{"1 MiB body"}},
		{"refuses with 500", secret, probe.LargeBody, func(h http.Header, body []byte) int {
			if verifying(secret)(h, body) != http.StatusNoContent {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		}, []string{"timestamp 10 minutes old", "timestamp 10 minutes ahead", "wrong signature", "no signature"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := probe.Run(context.Background(), probe.Config{URL: receiver(t, c.limit, c.rcv), Key: c.key, Client: client(loopback)})
			if len(rs) != 10 {
				t.Fatalf("%d results, want 10: %+v", len(rs), rs)
			}
			got := outcomes(rs)
			for _, r := range rs {
				want := probe.Pass
				switch {
				case r.Case == "same webhook-id processed once":
					want = probe.CannotTell
				case contains(c.fails, r.Case):
					want = probe.Fail
				}
				if r.Outcome != want {
					t.Errorf("%s: %s (%s), want %s", r.Case, r.Outcome, r.Detail, want)
				}
			}
			if probe.Failed(rs) != (len(c.fails) > 0) {
				t.Errorf("Failed = %v with %v", probe.Failed(rs), got)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// The probe sends what deliveries send: through the guarded dialer, which refuses a
// loopback receiver unless its range is allowed; every case then fails without an answer.
func TestProbeAddressRules(t *testing.T) {
	secret := webhook.NewSecret()
	url := receiver(t, probe.LargeBody, verifying(secret))
	rs := probe.Run(context.Background(), probe.Config{URL: url, Key: secret, Client: client(nil)})
	for _, r := range rs {
		if r.Case == "same webhook-id processed once" {
			continue
		}
		if r.Outcome != probe.Fail || r.Status != 0 || !strings.Contains(r.Detail, "loopback") {
			t.Errorf("%s: %s %d %q, want a failure refusing the loopback address", r.Case, r.Outcome, r.Status, r.Detail)
		}
	}
}

// The large delivery is exactly LargeBody bytes of JSON, and every delivery's body is
// valid JSON of the type EventType.
func TestProbeBodies(t *testing.T) {
	secret := webhook.NewSecret()
	var mu sync.Mutex
	var sizes []int
	url := receiver(t, 2*probe.LargeBody, func(h http.Header, body []byte) int {
		mu.Lock()
		defer mu.Unlock()
		sizes = append(sizes, len(body))
		if !strings.Contains(string(body), `"type":"`+probe.EventType+`"`) {
			return http.StatusBadRequest
		}
		return http.StatusNoContent
	})
	probe.Run(context.Background(), probe.Config{URL: url, Key: secret, Client: client(loopback)})
	mu.Lock()
	defer mu.Unlock()
	if len(sizes) != 9 || sizes[8] != probe.LargeBody {
		t.Fatalf("body sizes %v, want 9 deliveries, the last of %d bytes", sizes, probe.LargeBody)
	}
}

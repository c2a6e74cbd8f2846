package egress_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/internal/webhook/egress"
)

// Only loopback addresses are ever dialed here. The other ranges are checked through the
// dialer's Control and CheckAddr, which connect nowhere (package webhook's tests).

var loopbackV4 = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// receiver is an httptest server on 127.0.0.1 that counts the requests it gets.
func receiver(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("the test server is at %s, not on 127.0.0.1", srv.URL)
	}
	return srv, &n
}

func TestDialerRefusesLoopback(t *testing.T) {
	srv, hits := receiver(t, func(w http.ResponseWriter, r *http.Request) {})
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	client := egress.NewClient(webhook.NewDialer(nil, 2*time.Second), 5*time.Second)
	for _, url := range []string{
		"http://127.0.0.1:" + port + "/hook",
		"http://[::1]:" + port + "/hook",
		"http://localhost:" + port + "/hook",
	} {
		resp, err := client.Post(url, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			t.Errorf("POST %s: %s, want a refusal", url, resp.Status)
			continue
		}
		var refused *webhook.AddressError
		if !errors.As(err, &refused) || !errors.Is(err, webhook.ErrRefusedAddress) {
			t.Errorf("POST %s: %v, want an *AddressError", url, err)
			continue
		}
		if !refused.Addr.IsLoopback() || !strings.Contains(err.Error(), "refused to connect to "+refused.Addr.String()+": a loopback address") {
			t.Errorf("POST %s: %v, want the address and why", url, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}

func TestDialerAllowsWhatIsListed(t *testing.T) {
	srv, hits := receiver(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	client := egress.NewClient(webhook.NewDialer(loopbackV4, 2*time.Second), 5*time.Second)
	for _, url := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET %s with 127.0.0.0/8 allowed: %v", url, err)
		}
		body, err := egress.ReadBody(resp.Body, 1024)
		if err != nil || resp.StatusCode != 200 || string(body) != "ok" {
			t.Fatalf("GET %s: %s %q %v", url, resp.Status, body, err)
		}
	}
	if n := hits.Load(); n != 2 {
		t.Fatalf("the receiver got %d requests, want 2", n)
	}
	// 127.0.0.0/8 is not ::1.
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	if resp, err := client.Get("http://[::1]:" + port); !errors.Is(err, webhook.ErrRefusedAddress) {
		if err == nil {
			resp.Body.Close()
		}
		t.Fatalf("GET [::1] with 127.0.0.0/8 allowed: %v, want a refusal", err)
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	var followed atomic.Bool
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Store(true)
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	client := egress.NewClient(webhook.NewDialer(loopbackV4, 2*time.Second), 5*time.Second)
	resp, err := client.Post(srv.URL+"/hook", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	egress.ReadBody(resp.Body, 1024)
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "/elsewhere" {
		t.Fatalf("got %s Location %q, want the 307 itself", resp.Status, resp.Header.Get("Location"))
	}
	if followed.Load() {
		t.Fatal("the redirect was followed")
	}
}

func TestClientIgnoresProxyEnvironment(t *testing.T) {
	proxy, proxied := receiver(t, func(w http.ResponseWriter, r *http.Request) {})
	srv, hits := receiver(t, func(w http.ResponseWriter, r *http.Request) {})
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")
	client := egress.NewClient(webhook.NewDialer(loopbackV4, 2*time.Second), 5*time.Second)
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	egress.ReadBody(resp.Body, 0)
	if proxied.Load() != 0 || hits.Load() != 1 {
		t.Fatalf("proxy got %d requests, the receiver %d", proxied.Load(), hits.Load())
	}
}

func TestReadBody(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) })
	client := egress.NewClient(webhook.NewDialer(loopbackV4, 2*time.Second), 5*time.Second)
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := egress.ReadBody(resp.Body, 1024)
	if err != nil || len(body) != 1024 {
		t.Fatalf("ReadBody kept %d bytes, %v; want 1024", len(body), err)
	}
	counted := &countingReader{r: strings.NewReader(big)}
	if body, err := egress.ReadBody(io.NopCloser(counted), 1024); err != nil || len(body) != 1024 {
		t.Fatalf("ReadBody kept %d bytes, %v", len(body), err)
	}
	if counted.n > 1024+egress.DrainLimit {
		t.Fatalf("ReadBody read %d bytes, more than it keeps and drains", counted.n)
	}
	if body, err := egress.ReadBody(io.NopCloser(strings.NewReader("short")), 1024); err != nil || string(body) != "short" {
		t.Fatalf("ReadBody = %q, %v", body, err)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

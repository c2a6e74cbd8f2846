package egress_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/internal/webhook/egress"
)

// Only 127.0.0.1 is dialed here: the receivers are httptest servers on it, the refused and
// closed addresses are on it too.

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// hookPath is the path and query the deliveries go to: it stands for a URL that holds a
// credential, which no Error may repeat.
const hookPath = "/hook?token=tok_3Qe8Yc1xLw"

// sentBody is the body of the deliveries; no Error may repeat it either.
var sentBody = []byte(`{"type":"payment.succeeded","data":{"card":"4242-secret-body"}}`)

// testNow is the clock of the tests' HTTP-date Retry-After.
var testNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func loopbackClient(timeout time.Duration) *http.Client {
	return egress.NewClient(webhook.NewDialer(loopback, 2*time.Second), timeout)
}

// post sends sentBody to url with webhook headers under a fresh secret, and checks what
// holds of every Attempt: an Error exactly when there was no 2xx, and none that repeats
// the URL's query or the body.
func post(t *testing.T, ctx context.Context, client *http.Client, url string) egress.Attempt {
	t.Helper()
	header := webhook.Headers("msg_1", testNow, sentBody, webhook.NewSecret())
	a := egress.Post(ctx, client, url, header, sentBody, func() time.Time { return testNow })
	if (a.Error == "") != a.Succeeded() {
		t.Errorf("Post: status %d, Error %q", a.StatusCode, a.Error)
	}
	for _, secret := range []string{"tok_3Qe8Yc1xLw", "4242-secret-body", "msg_1"} {
		if strings.Contains(a.Error, secret) {
			t.Errorf("Post's Error %q repeats %q", a.Error, secret)
		}
	}
	return a
}

func TestPostStatuses(t *testing.T) {
	for _, tc := range []struct {
		status     int
		retryAfter string // the answer's Retry-After header, if any
		answer     string
		err        string
		ok, gone   bool
		wait       time.Duration
	}{
		{status: 200, answer: "ok", ok: true},
		{status: 201, answer: `{"received":true}`, ok: true},
		{status: 204, ok: true},
		{status: 299, ok: true},
		{status: 500, answer: "internal error", err: "status 500"},
		{status: 500, retryAfter: "30", err: "status 500"}, // Retry-After on 429, 502, 503, 504 only
		{status: 404, answer: "no such hook", err: "status 404"},
		{status: 410, answer: "gone", err: "status 410", gone: true},
		{status: 400, err: "status 400"},
		{status: 301, err: "redirect not followed (status 301)"},
		{status: 304, err: "redirect not followed (status 304)"},
		{status: 308, err: "redirect not followed (status 308)"},
		{status: 429, err: "status 429"},
		{status: 429, retryAfter: "120", err: "status 429", wait: 2 * time.Minute},
		{status: 502, retryAfter: "0", err: "status 502"},
		{status: 503, retryAfter: "soon", err: "status 503"},
		{status: 504, retryAfter: "-5", err: "status 504"},
	} {
		srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
			if tc.retryAfter != "" {
				w.Header().Set("Retry-After", tc.retryAfter)
			}
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.answer)
		})
		a := post(t, context.Background(), loopbackClient(5*time.Second), srv.URL+hookPath)
		if a.StatusCode != tc.status || a.Error != tc.err || a.Succeeded() != tc.ok || a.Gone() != tc.gone ||
			string(a.Response) != tc.answer || a.RetryAfter != tc.wait || a.Latency <= 0 {
			t.Errorf("%d Retry-After %q: %+v", tc.status, tc.retryAfter, a)
		}
	}
}

func TestPostRedirectNotFollowed(t *testing.T) {
	var followed atomic.Bool
	srv, hits := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Store(true)
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	a := post(t, context.Background(), loopbackClient(5*time.Second), srv.URL+hookPath)
	if a.StatusCode != 302 || a.Error != "redirect not followed (status 302)" || a.Succeeded() {
		t.Fatalf("Post = %+v, want the 302 itself", a)
	}
	if followed.Load() || hits.Load() != 1 {
		t.Fatalf("the redirect was followed: %d requests", hits.Load())
	}
}

func TestPostRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		status int
		value  string
		want   time.Duration
	}{
		{429, "120", 2 * time.Minute},
		{503, "  7 ", 7 * time.Second},
		{503, "0", 0},
		{502, testNow.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{504, testNow.Add(time.Hour).Format(time.RFC850), time.Hour},
		{429, testNow.Add(time.Minute).Format(time.ANSIC), time.Minute},
		{429, testNow.Add(-time.Minute).Format(http.TimeFormat), 0},
		{429, testNow.Format(http.TimeFormat), 0},
		{429, "99999999999999999999", 1<<63 - 1},
		{429, "9223372037", 1<<63 - 1},
		{429, "1.5", 0},
		{429, "12abc", 0},
		{429, "-120", 0},
		{429, "tomorrow", 0},
		{503, "", 0},
		{500, "120", 0},
		{200, "120", 0},
	} {
		srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", tc.value)
			w.WriteHeader(tc.status)
		})
		a := post(t, context.Background(), loopbackClient(5*time.Second), srv.URL+hookPath)
		if a.StatusCode != tc.status || a.RetryAfter != tc.want {
			t.Errorf("%d Retry-After %q: status %d, RetryAfter %v; want %v", tc.status, tc.value, a.StatusCode, a.RetryAfter, tc.want)
		}
	}
}

// The receiver gets the body and the headers exactly as given, and can verify them.
func TestPostHeaders(t *testing.T) {
	type got struct {
		method, uri string
		header      http.Header
		body        []byte
	}
	received := make(chan got, 1)
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		received <- got{r.Method, r.RequestURI, r.Header.Clone(), body}
		w.WriteHeader(http.StatusNoContent)
	})
	secret := webhook.NewSecret()
	header := webhook.Headers("msg_2", testNow, sentBody, secret)
	header["Content-Type"] = []string{"application/json"}
	header["User-Agent"] = []string{"payments-webhooks/1"}
	sent := http.Header(header).Clone()

	a := egress.Post(context.Background(), loopbackClient(5*time.Second), srv.URL+hookPath, header, sentBody, nil)
	if !a.Succeeded() || a.StatusCode != 204 || a.Error != "" || len(a.Response) != 0 {
		t.Fatalf("Post = %+v", a)
	}
	if http.Header(header).Get("Webhook-Id") != "msg_2" || len(header) != len(sent) {
		t.Fatalf("Post changed the caller's header: %v", header)
	}
	r := <-received
	if r.method != http.MethodPost || r.uri != hookPath || !bytes.Equal(r.body, sentBody) {
		t.Fatalf("the receiver got %s %s %q", r.method, r.uri, r.body)
	}
	for key, want := range sent {
		if v := r.header.Values(key); len(v) != len(want) || v[0] != want[0] {
			t.Errorf("the receiver got %s: %q, want %q", key, v, want)
		}
	}
	if cl := r.header.Get("Content-Length"); cl != strconv.Itoa(len(sentBody)) {
		t.Errorf("Content-Length %q, want %d", cl, len(sentBody))
	}
	if err := webhook.Verify(secret, r.header, r.body, 0, testNow); err != nil {
		t.Fatalf("the receiver cannot verify the delivery: %v", err)
	}
}

func TestPostTimeout(t *testing.T) {
	// Until the client goes away, which the server notices once the body is read.
	stall := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}
	t.Run("ClientTimeout", func(t *testing.T) {
		srv, _ := receiver(t, stall)
		a := post(t, context.Background(), loopbackClient(300*time.Millisecond), srv.URL+hookPath)
		if a.StatusCode != 0 || a.Error != "timed out after 300ms" || a.Latency < 300*time.Millisecond || a.Latency > 3*time.Second {
			t.Fatalf("Post = %+v", a)
		}
	})
	t.Run("ContextDeadline", func(t *testing.T) {
		srv, _ := receiver(t, stall)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		a := post(t, ctx, loopbackClient(5*time.Second), srv.URL+hookPath)
		// What was left of the deadline when Post began, to the millisecond: 1s, or less
		// on a busy machine (a race run's pauses included).
		left, err := time.ParseDuration(strings.TrimPrefix(a.Error, "timed out after "))
		if a.StatusCode != 0 || err != nil || left > time.Second || left < 700*time.Millisecond || a.Latency > 4*time.Second {
			t.Fatalf("Post = %+v", a)
		}
	})
	// The answer arrives, then its body stalls: the status stands, and says so.
	stallBody := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			stall(w, r)
		}
	}
	t.Run("BodyOfAnError", func(t *testing.T) {
		srv, _ := receiver(t, stallBody(500))
		a := post(t, context.Background(), loopbackClient(300*time.Millisecond), srv.URL+hookPath)
		if a.StatusCode != 500 || a.Error != "status 500; reading the answer: timed out after 300ms" || string(a.Response) != "partial" {
			t.Fatalf("Post = %+v", a)
		}
	})
	t.Run("BodyOfASuccess", func(t *testing.T) {
		srv, _ := receiver(t, stallBody(200))
		a := post(t, context.Background(), loopbackClient(300*time.Millisecond), srv.URL+hookPath)
		if !a.Succeeded() || a.Error != "" || string(a.Response) != "partial" || a.Latency < 300*time.Millisecond {
			t.Fatalf("Post = %+v", a)
		}
	})
}

// A dialer with no allow-list refuses 127.0.0.1 before connecting: the receiver gets
// nothing, and the Error says which address and why.
func TestPostRefusedAddress(t *testing.T) {
	srv, hits := receiver(t, func(w http.ResponseWriter, r *http.Request) {})
	client := egress.NewClient(webhook.NewDialer(nil, 2*time.Second), 5*time.Second)
	a := post(t, context.Background(), client, srv.URL+hookPath)
	if a.StatusCode != 0 || a.Error != "refused to connect to 127.0.0.1: a loopback address" {
		t.Fatalf("Post = %+v", a)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}

func TestPostConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	a := post(t, context.Background(), loopbackClient(5*time.Second), "http://"+addr+hookPath)
	if a.StatusCode != 0 || a.Error != "connection refused" {
		t.Fatalf("Post = %+v", a)
	}
}

// The receiver closes the connection without answering.
func TestPostConnectionClosed(t *testing.T) {
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	a := post(t, context.Background(), loopbackClient(5*time.Second), srv.URL+hookPath)
	if a.StatusCode != 0 || a.Error != "connection closed before a complete answer" {
		t.Fatalf("Post = %+v", a)
	}
}

func TestPostCanceled(t *testing.T) {
	srv, hits := receiver(t, func(w http.ResponseWriter, r *http.Request) {})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := post(t, ctx, loopbackClient(5*time.Second), srv.URL+hookPath)
	if a.StatusCode != 0 || a.Error != "canceled" || hits.Load() != 0 {
		t.Fatalf("Post = %+v, %d requests", a, hits.Load())
	}
}

func TestPostInvalidURL(t *testing.T) {
	for url, want := range map[string]string{
		"http://exa mple.com" + hookPath:    `invalid request: invalid character " " in host name`,
		"ftp://127.0.0.1:1" + hookPath:      `unsupported protocol scheme "ftp"`,
		"127.0.0.1:1" + hookPath:            `invalid request: first path segment in URL cannot contain colon`,
		"http://127.0.0.1:1\n" + hookPath:   `invalid request: net/url: invalid control character in URL`,
		"http://[::1" + hookPath:            `invalid request: missing ']' in host`,
		"http://127.0.0.1:99999" + hookPath: `dial tcp: address 99999: invalid port`,
	} {
		a := post(t, context.Background(), loopbackClient(5*time.Second), url)
		if a.StatusCode != 0 || a.Error != want {
			t.Errorf("Post(%q) = %+v, want the Error %q", url, a, want)
		}
	}
}

// Of a large answer, the first ResponseKeep bytes are kept, and the latency runs to the
// end of reading them.
func TestPostLargeResponse(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(100 * time.Millisecond) // after the status, before the body
		io.WriteString(w, big)
	})
	a := post(t, context.Background(), loopbackClient(5*time.Second), srv.URL+hookPath)
	if !a.Succeeded() || len(a.Response) != egress.ResponseKeep || string(a.Response) != big[:egress.ResponseKeep] {
		t.Fatalf("Post: status %d, Error %q, %d bytes kept", a.StatusCode, a.Error, len(a.Response))
	}
	if a.Latency < 100*time.Millisecond || a.Latency > 3*time.Second {
		t.Fatalf("Post's latency %v, want the 100ms before the body and little more", a.Latency)
	}
}

// The receiver resets the connection without answering.
func TestPostConnectionReset(t *testing.T) {
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.(*net.TCPConn).SetLinger(0) // Close sends RST
			conn.Close()
		}
	})
	a := post(t, context.Background(), loopbackClient(5*time.Second), srv.URL+hookPath)
	if a.StatusCode != 0 || a.Error != "connection reset" {
		t.Fatalf("Post = %+v", a)
	}
}

// Without a header or a clock: the request goes as it is, and Retry-After is read
// against time.Now.
func TestPostNilHeader(t *testing.T) {
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	a := egress.Post(context.Background(), loopbackClient(5*time.Second), srv.URL+hookPath, nil, nil, nil)
	if a.StatusCode != 503 || a.Error != "status 503" || a.RetryAfter < 58*time.Minute || a.RetryAfter > time.Hour {
		t.Fatalf("Post = %+v", a)
	}
}

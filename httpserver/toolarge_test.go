package httpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/client"
	"github.com/platform-payments/payments/httpserver"
)

// A body over MaxBodyBytes is answered 413 to a Go client every time, not a broken pipe or
// a reset: the server reads (and drops) a bounded part of what it refused before closing,
// so its close does not reset the connection under the answer (issue 30).

// serveRun serves h with Run, as paymentsd serves, on a port of its own, and returns its
// base URL; the server stops when t ends.
func serveRun(t *testing.T, h http.Handler) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- httpserver.Run(ctx, h, httpserver.Config{Addr: "127.0.0.1:0", Ready: func(a net.Addr) { addr <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case a := <-addr:
		return "http://" + a.String()
	case err := <-done:
		t.Fatalf("Run: %v", err)
		return ""
	}
}

// tooLargeBody is a Create User body of n bytes, JSON all the way through.
func tooLargeBody(n int) []byte {
	const head, tail = `{"name":"`, `"}`
	return []byte(head + strings.Repeat("A", n-len(head)-len(tail)) + tail)
}

// wantTooLarge fails t unless resp is the documented 413 in the error envelope.
func wantTooLarge(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413: %s", resp.StatusCode, body)
	}
	var env struct {
		Success *bool  `json:"success"`
		Message string `json:"message"`
		Data    any    `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Success == nil || *env.Success || env.Message != "Request body exceeds 64 KiB." {
		t.Fatalf("413 body %s, want the error envelope with %q (%v)", body, "Request body exceeds 64 KiB.", err)
	}
}

// transports are the two ways a Go client sends: keeping its connections (the default,
// the scenario runner's) and closing each after its answer (paymentsd call's, which sends
// Connection: close: net/http's server then closes at once, unread body and all).
var transports = []struct {
	name      string
	keepAlive bool
}{{"keep-alive", true}, {"close", false}}

func goClient(keepAlive bool) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = !keepAlive
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func TestTooLargeAnsweredToGoClients(t *testing.T) {
	svc, platform := freshService(t)
	base := serveRun(t, httpserver.NewWithOptions(svc, nil, unlimited))
	ctx := context.Background()
	body := tooLargeBody(1 << 20)

	for _, tr := range transports {
		t.Run("client/"+tr.name, func(t *testing.T) {
			c, err := client.New(base, client.Platform(platform.PlatformID.String(), platform.Secret),
				client.WithHTTPClient(goClient(tr.keepAlive)))
			if err != nil {
				t.Fatal(err)
			}
			name := string(body[len(`{"name":"`) : len(body)-len(`"}`)])
			for i := range 10 {
				_, err := c.CreateUser(ctx, client.CreateUserJSONRequestBody{Name: name})
				var e *client.Error
				if !errors.As(err, &e) || e.StatusCode != http.StatusRequestEntityTooLarge || e.Message != "Request body exceeds 64 KiB." {
					t.Fatalf("body %d: %v, want the 413", i+1, err)
				}
			}
		})
		// A plain net/http client, with the length announced and without it (chunked:
		// the server finds out while reading).
		for _, chunked := range []bool{false, true} {
			name := "net/http/" + tr.name
			if chunked {
				name += "/chunked"
			}
			t.Run(name, func(t *testing.T) {
				hc := goClient(tr.keepAlive)
				for i := range 10 {
					var r io.Reader = bytes.NewReader(body)
					if chunked {
						r = io.MultiReader(r) // hides the length
					}
					resp, err := hc.Do(signedTo(t, base, platform, body, r))
					if err != nil {
						t.Fatalf("body %d: %v, want the 413", i+1, err)
					}
					got, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						t.Fatalf("body %d: reading the answer: %v", i+1, err)
					}
					wantTooLarge(t, resp, got)
					if !resp.Close { // net/http reads Connection: close into Close
						t.Errorf("body %d: the server keeps the connection, want Connection: close", i+1)
					}
				}
			})
		}
	}
}

// A body far beyond what the server reads of a refused body ends cleanly too: the 413, or
// a closed connection, and never a client left waiting.
func TestTooLargeBeyondTheDrain(t *testing.T) {
	svc, platform := freshService(t)
	base := serveRun(t, httpserver.NewWithOptions(svc, nil, unlimited))
	body := tooLargeBody(32 << 20)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			hc := goClient(tr.keepAlive)
			for i := range 3 {
				start := time.Now()
				resp, err := hc.Do(signedTo(t, base, platform, body, bytes.NewReader(body)))
				if took := time.Since(start); took > 10*time.Second {
					t.Fatalf("body %d: %v to end, want a bounded wait", i+1, took)
				}
				if err != nil {
					t.Logf("body %d: %v (the connection closed)", i+1, err)
					continue
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Logf("body %d: reading the answer: %v (the connection closed)", i+1, err)
					continue
				}
				wantTooLarge(t, resp, got)
			}
		})
	}
}

// A client that writes its whole body before reading anything ends too: the server stops
// reading at its bound and closes.
func TestTooLargeWriterThatDoesNotRead(t *testing.T) {
	svc, platform := freshService(t)
	base := serveRun(t, httpserver.NewWithOptions(svc, nil, unlimited))
	body := tooLargeBody(32 << 20)
	req := signedTo(t, base, platform, body, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var head bytes.Buffer
	fmt.Fprintf(&head, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", req.URL.Path, req.URL.Host, len(body))
	req.Header.Write(&head)
	head.WriteString("\r\n")
	start := time.Now()
	_, werr := conn.Write(append(head.Bytes(), body...))
	resp, rerr := http.ReadResponse(bufio.NewReader(conn), nil)
	if took := time.Since(start); took > 8*time.Second {
		t.Fatalf("%v to end, want a bounded wait (write: %v, read: %v)", took, werr, rerr)
	}
	if rerr != nil {
		t.Logf("write: %v; read: %v (the connection closed)", werr, rerr)
		return
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantTooLarge(t, resp, got)
}

// A client that announces an oversize body and waits to be told to send it
// (Expect: 100-continue) gets the 413 instead, and sends nothing.
func TestTooLargeExpectContinue(t *testing.T) {
	svc, platform := freshService(t)
	base := serveRun(t, httpserver.NewWithOptions(svc, nil, unlimited))
	body := tooLargeBody(1 << 20)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = 10 * time.Second // long: a body sent means the server asked for it
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	sent := &countingReader{r: bytes.NewReader(body)}
	req := signedTo(t, base, platform, body, sent)
	req.ContentLength = int64(len(body))
	req.Header.Set("Expect", "100-continue")
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	wantTooLarge(t, resp, got)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("413 after %v, want it at once", took)
	}
	if sent.n > 0 {
		t.Errorf("the client sent %d bytes of the body, want none", sent.n)
	}
}

// countingReader counts what is read from r.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// signedTo is a signed Create User request to the server at base, sending body from r.
func signedTo(t *testing.T, base string, platform payments.PlatformCredentials, body []byte, r io.Reader) *http.Request {
	t.Helper()
	const target = "/api/platform/users/create"
	req, err := http.NewRequest(http.MethodPost, base+target, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(payments.HeaderPlatformID, platform.PlatformID.String())
	req.Header.Set(payments.HeaderSignature, payments.Sign(platform.Secret, http.MethodPost, target, body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

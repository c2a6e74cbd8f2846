package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
)

// webhook listen answers 204 to a delivery signed under its secret and prints it, 401 to
// one that is not (saying why on stderr), and stops when its context ends. Loopback only.
func TestWebhookListen(t *testing.T) {
	secret := webhook.NewSecret()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"webhook", "listen", "-addr", "127.0.0.1:0", "-secret", secret.Text()}, strings.NewReader(""), &stdout, &stderr)
	}()
	listening := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("no listening line; stderr: %s", stderr.String())
	}

	deliver := func(header map[string][]string, body string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url+"/hooks", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	body := `{"id":"0190a1b2-0000-7000-8000-000000000001","type":"user.created"}`
	if got := deliver(webhook.Headers("0190a1b2-0000-7000-8000-000000000001", time.Now(), []byte(body), secret), body); got != http.StatusNoContent {
		t.Fatalf("signed delivery: %d, want 204", got)
	}
	var line struct {
		ID    string          `json:"id"`
		Event json.RawMessage `json:"event"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &line); err != nil || line.ID != "0190a1b2-0000-7000-8000-000000000001" || string(line.Event) != body {
		t.Fatalf("stdout %q (%v), want the delivery as one JSON line", stdout.String(), err)
	}
	other := webhook.NewSecret()
	if got := deliver(webhook.Headers("0190a1b2-0000-7000-8000-000000000002", time.Now(), []byte(body), other), body); got != http.StatusUnauthorized {
		t.Errorf("delivery signed under another secret: %d, want 401", got)
	}
	if got := deliver(nil, body); got != http.StatusUnauthorized {
		t.Errorf("unsigned delivery: %d, want 401", got)
	}
	if !strings.Contains(stderr.String(), "no matching webhook signature") || !strings.Contains(stderr.String(), "missing webhook header") {
		t.Errorf("stderr does not say why deliveries were refused: %s", stderr.String())
	}
	if strings.Count(stdout.String(), "\n") != 1 {
		t.Errorf("stdout has refused deliveries too: %s", stdout.String())
	}
	cancel()
	select {
	case code := <-exited:
		if code != exitOK {
			t.Errorf("exit %d after its context ended, want 0; stderr: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("webhook listen did not stop when its context ended")
	}
}

// A secret that is not whsec_ is a usage error, before anything listens.
func TestWebhookListen_BadSecret(t *testing.T) {
	var stdout, stderr syncBuffer
	code := run(context.Background(), []string{"webhook", "listen", "-addr", "127.0.0.1:0", "-secret", "not-a-secret"}, strings.NewReader(""), &stdout, &stderr)
	if code != exitUsage || strings.Contains(stderr.String(), "listening") || strings.Contains(stderr.String(), "not-a-secret") {
		t.Errorf("exit %d, stderr %q: want 2, no listener, and the secret not echoed", code, stderr.String())
	}
}

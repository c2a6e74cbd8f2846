package main

// paymentsd webhook listen: a local receiver of webhook deliveries, as a developer runs
// one beside a server to see what it sends.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/command"
	"github.com/platform-payments/payments/internal/webhook"
)

// maxDeliveryBytes bounds the body of a delivery the receiver reads.
const maxDeliveryBytes = 1 << 20

var webhookListenCommand = &command.Command{
	Name:    "webhook listen",
	Summary: "Receive webhook deliveries on a local address, verify each and print it.",
	Usage:   "-secret whsec_…|whpk_… [-addr 127.0.0.1:8090] [-tolerance 5m]",
	Details: `Every request is a delivery: its webhook-id, webhook-timestamp and webhook-signature
headers are checked against the endpoint's secret (payments.VerifyWebhook), or, for an
endpoint signing ed25519, its public_key (whpk_…), which checks v1a signatures. A delivery that
verifies is answered 204 and printed on stdout as one line of JSON, {"id", "timestamp",
"event"}; one that does not is answered 401, and why is printed on stderr. The first line
on stderr gives the address listened on, so -addr 127.0.0.1:0 picks a free port.
SIGINT or SIGTERM stops it.`,
	Run: runWebhookListen,
}

func runWebhookListen(ctx context.Context, x *command.Invocation, args []string) error {
	fs := x.FlagSet()
	addr := fs.String("addr", "127.0.0.1:8090", "listen on the TCP address `ADDR` (port 0 picks a free port)")
	secret := fs.String("secret", "", "verify deliveries with the endpoint's `SECRET` (whsec_…), or its public key (whpk_…)")
	tolerance := fs.Duration("tolerance", payments.DefaultWebhookTolerance, "accept a webhook-timestamp at most `DURATION` from this clock")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := command.NoArgs(fs); err != nil {
		return err
	}
	if *secret == "" {
		return command.Usagef("-secret is required: the endpoint's whsec_ secret or whpk_ public key")
	}
	if _, err := webhook.ParseSecret(*secret); err != nil {
		return command.Usagef("-secret: %v", err)
	}
	if *tolerance <= 0 {
		return command.Usagef("-tolerance must be positive")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(x.Stderr, "listening on http://%s\n", ln.Addr())

	r := &receiver{secret: *secret, tolerance: *tolerance, stdout: x.Stdout, stderr: x.Stderr}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// receiver verifies and prints each delivery; mu keeps its lines whole.
type receiver struct {
	secret         string
	tolerance      time.Duration
	mu             sync.Mutex
	stdout, stderr io.Writer
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxDeliveryBytes))
	if err != nil {
		r.refuse(w, req, fmt.Errorf("reading the body: %w", err))
		return
	}
	if err := payments.VerifyWebhook(r.secret, req.Header, body, r.tolerance); err != nil {
		r.refuse(w, req, err)
		return
	}
	line := struct {
		ID        string          `json:"id"`
		Timestamp string          `json:"timestamp"`
		Event     json.RawMessage `json:"event"`
	}{ID: req.Header.Get(webhook.HeaderID), Timestamp: req.Header.Get(webhook.HeaderTimestamp), Event: body}
	if !json.Valid(body) {
		line.Event, _ = json.Marshal(string(body)) // a string's encoding never fails
	}
	out, err := json.Marshal(line)
	if err != nil {
		r.refuse(w, req, err)
		return
	}
	r.mu.Lock()
	fmt.Fprintf(r.stdout, "%s\n", out)
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// refuse answers 401 and says why on stderr.
func (r *receiver) refuse(w http.ResponseWriter, req *http.Request, err error) {
	r.mu.Lock()
	fmt.Fprintf(r.stderr, "refused %s %s: %v\n", req.Method, req.URL.Path, err)
	r.mu.Unlock()
	http.Error(w, "webhook not verified", http.StatusUnauthorized)
}

package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/internal/command"
)

// host runs a command of the table on what paymentsd's flags name: the database of -db
// (with its data keys), the server of -url, and the files and standard input of the
// operator.
type host struct {
	stdin  io.Reader // nil when there is none
	stderr io.Writer
	logger *slog.Logger // when set (serve), takes the notes other commands write on stderr
	store  *store       // set by Flags for a command of the database
	url    *string      // set by Flags for a command of a server
	// urlFrom says where url came from when -url did not give it ("$PAYMENTS_URL"), for
	// the note on a 401.
	urlFrom string
	// allow is webhook add's -webhook-allow-cidr, as serve's: the ranges an endpoint may
	// be at though not public; nil: $PAYMENTS_WEBHOOK_ALLOW_CIDR's.
	allow []netip.Prefix
	// readOnly: the command only reads the database (command.Command.ReadsOnly).
	readOnly bool
}

var _ command.Host = (*host)(nil)

// hostOf returns the host of an invocation of paymentsd.
func hostOf(x *command.Invocation) *host { return x.Host.(*host) }

// What call assumes when not told: the server serve runs by default, or the one its
// environment names, and the platform the environment names.
const (
	envURL            = "PAYMENTS_URL"
	envAddr           = "PAYMENTS_ADDR" // serve's -addr
	envDB             = "PAYMENTS_DB"   // serve's -db, bench's default -baseline-db
	envPlatformID     = "PAYMENTS_PLATFORM_ID"
	envPlatformSecret = "PAYMENTS_PLATFORM_SECRET"
	defaultURL        = "http://127.0.0.1:8080"
)

// localURL returns call's default -url and where it came from: $PAYMENTS_URL, else the
// server of $PAYMENTS_ADDR (a host left out is this machine's), else serve's default
// address.
func localURL() (u, from string) {
	if u := os.Getenv(envURL); u != "" {
		return u, "$" + envURL
	}
	if addr := os.Getenv(envAddr); addr != "" {
		if strings.HasPrefix(addr, ":") {
			addr = "127.0.0.1" + addr
		}
		return "http://" + addr, "http:// and $" + envAddr
	}
	return defaultURL, "the default: neither -url, $" + envURL + " nor $" + envAddr + " is set"
}

// callTimeout bounds a call's whole exchange, so that a stalled server cannot hang a script.
const callTimeout = time.Minute

func (h *host) Flags(c *command.Command, fs *flag.FlagSet) func() error {
	switch c.Uses {
	case command.UsesDatabase:
		h.store, h.readOnly = storeFlags(fs, c.ReadsOnly), c.ReadsOnly
		if c.Name == "webhook add" {
			fs.Func("webhook-allow-cidr", "let the endpoint be at an address in `CIDR` although not public, as serve's flag "+
				"(comma-separated or repeated; default $"+envAllowCIDR+")", func(v string) error {
				ranges, err := dispatch.ParseCIDRs(v)
				h.allow = append(h.allow, ranges...)
				return err
			})
		}
		return h.store.check
	case command.UsesServer:
		h.url = fs.String("url", "", "the server's base `URL`, scheme://host:port; default $"+envURL+
			", else http:// and $"+envAddr+", else "+defaultURL)
		return func() error {
			if *h.url == "" {
				*h.url, h.urlFrom = localURL()
			}
			_, err := parseBaseURL(*h.url)
			return err
		}
	}
	return nil
}

func (h *host) Usage(c *command.Command) string { return usageLine(c) }

func (h *host) Service(ctx context.Context, fn func(*payments.Service) error) error {
	allow := h.allow
	if v := os.Getenv(envAllowCIDR); allow == nil && v != "" {
		var err error
		if allow, err = dispatch.ParseCIDRs(v); err != nil {
			return command.Usagef("$%s: %v", envAllowCIDR, err)
		}
	}
	return h.withService(ctx, payments.Options{WebhookAllow: allow, ReadOnly: h.readOnly}, fn)
}

// envAllowCIDR is serve's -webhook-allow-cidr from the environment, which the
// administration commands honour too: an operator's webhook add accepts what the
// server it runs beside does.
const envAllowCIDR = "PAYMENTS_WEBHOOK_ALLOW_CIDR"

func (h *host) ReadFile(name string) ([]byte, error) {
	if name != "-" {
		return os.ReadFile(name) // #nosec G304 -- the operator names the file on their own command line, with their own rights
	}
	if h.stdin == nil {
		return nil, nil
	}
	b, err := io.ReadAll(h.stdin)
	if err != nil {
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	return b, nil
}

func (h *host) Getenv(name string) string { return os.Getenv(name) }

func (h *host) Server() (command.Server, error) {
	u, err := parseBaseURL(*h.url)
	if err != nil {
		return command.Server{}, err
	}
	// A transport of its own that keeps no connection: Main may run many times in one process.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DisableKeepAlives = true
	client := &http.Client{
		Transport:     transport,
		Timeout:       callTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return command.Server{URL: u, Client: client, Now: time.Now,
		PlatformID: os.Getenv(envPlatformID), Secret: os.Getenv(envPlatformSecret),
		PlatformIDFrom: "$" + envPlatformID, SecretFrom: "$" + envPlatformSecret}, nil
}

// Answered fails a call whose status is not 2xx, saying the status; for a 401, also the
// server it came from and why that one (-url, $PAYMENTS_URL, ...): credentials hold only
// on a server of the database they were made in.
func (h *host) Answered(resp *http.Response, _ []byte) error {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		status := resp.Status
		if status == "" {
			status = fmt.Sprint(resp.StatusCode)
		}
		e := &plainError{msg: "HTTP " + status}
		if resp.StatusCode == http.StatusUnauthorized {
			e.note = fmt.Sprintf("%s call: the request went to %s (%s)", program, h.serverURL(), cmp.Or(h.urlFrom, "-url"))
		}
		return e
	}
	return nil
}

// serverURL is -url as call used it, scheme://host:port.
func (h *host) serverURL() string {
	u, err := parseBaseURL(*h.url)
	if err != nil {
		return *h.url
	}
	return u.String()
}

// parseBaseURL checks -url: an http or https origin, without path, query or credentials,
// so that the request target is TARGET exactly.
func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, command.Usagef("-url %q: want http://HOST[:PORT] or https://HOST[:PORT]", s)
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, command.Usagef("-url %q: want only scheme, host and port (the path goes in TARGET)", s)
	}
	return u, nil
}

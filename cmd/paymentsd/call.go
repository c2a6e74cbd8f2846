package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/platform-payments/payments"
)

var callCommand = &command{
	name:    "call",
	summary: "Sign and send one request to a running server and print the response body.",
	usage:   "-url URL (-platform ID -secret S [-timestamp | -timestamp-at UNIX] | -api-key K -api-secret S) [-header 'Name: value']... METHOD PATH [BODY]",
	details: `PATH is the request target (path and query) and is sent and signed byte for byte.
-timestamp sends X-Timestamp, the current Unix time, and signs it with the request, as a
platform created with -require-timestamp must; -timestamp-at sends UNIX instead.
BODY is sent as given; @FILE sends the contents of FILE and @- standard input. A non-empty
body goes with Content-Type: application/json unless a -header sets another.
The response body is printed as received. Exit status 0 for a 2xx status; otherwise 1,
with "HTTP <status>" on stderr. Redirects are not followed.`,
	run: runCall,
}

// callTimeout bounds the whole exchange, so that a stalled server cannot hang a script.
const callTimeout = time.Minute

func runCall(ctx context.Context, inv *invocation, args []string) error {
	fs := inv.flagSet()
	base := fs.String("url", "", "the server's base `URL`, scheme://host:port (required)")
	platformID := fs.String("platform", "", "sign as the platform with this `ID` (X-Platform-ID)")
	secret := fs.String("secret", "", "the platform's signing `SECRET` (with -platform)")
	apiKey := fs.String("api-key", "", "call the user-API with this `KEY` (X-Api-Key)")
	apiSecret := fs.String("api-secret", "", "the user-API `SECRET` (X-Api-Secret, with -api-key)")
	stamp := fs.Bool("timestamp", false, "send X-Timestamp, the current Unix time, and sign it (with -platform)")
	stampAt := fs.Int64("timestamp-at", 0, "send X-Timestamp `UNIX` (seconds) and sign it, instead of the current time (with -platform)")
	var extra headerFlag
	fs.Var(&extra, "header", "send the header `'Name: value'` too, replacing one of that name call would send; repeatable")
	if err := inv.parse(fs, args); err != nil {
		return err
	}
	if *base == "" {
		return usagef("-url is required")
	}
	server, err := parseBaseURL(*base)
	if err != nil {
		return err
	}
	signed := *platformID != "" || *secret != ""
	keyed := *apiKey != "" || *apiSecret != ""
	switch {
	case signed && keyed:
		return usagef("give -platform and -secret, or -api-key and -api-secret, not both")
	case !signed && !keyed:
		return usagef("credentials are required: -platform and -secret, or -api-key and -api-secret")
	case signed && (*platformID == "" || *secret == ""):
		return usagef("-platform and -secret go together")
	case keyed && (*apiKey == "" || *apiSecret == ""):
		return usagef("-api-key and -api-secret go together")
	}
	var timestamp string
	switch at := isSet(fs, "timestamp-at"); {
	case *stamp && at:
		return usagef("give -timestamp or -timestamp-at, not both")
	case (*stamp || at) && !signed:
		return usagef("-timestamp and -timestamp-at go with -platform and -secret")
	case *stamp:
		timestamp = payments.Timestamp(time.Now())
	case at:
		timestamp = strconv.FormatInt(*stampAt, 10)
	}
	if n := fs.NArg(); n < 2 || n > 3 {
		return usagef("want METHOD PATH [BODY]; got %d argument%s", n, plural(n))
	}
	method := strings.ToUpper(fs.Arg(0))
	if !isToken(method) {
		return usagef("%q is not an HTTP method", fs.Arg(0))
	}
	target := fs.Arg(1)
	u, err := requestURL(server, target)
	if err != nil {
		return err
	}
	body, err := inv.readBody(fs.Arg(2))
	if err != nil {
		return err
	}

	req, err := http.NewRequestWithContext(ctx, method, server.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.URL = u
	req.Header.Set("User-Agent", program)
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case signed && timestamp != "":
		req.Header.Set(payments.HeaderPlatformID, *platformID)
		req.Header.Set(payments.HeaderTimestamp, timestamp)
		req.Header.Set(payments.HeaderSignature, payments.SignTimestamped(*secret, method, target, body, timestamp))
	case signed:
		req.Header.Set(payments.HeaderPlatformID, *platformID)
		req.Header.Set(payments.HeaderSignature, payments.Sign(*secret, method, target, body))
	default:
		req.Header.Set(payments.HeaderAPIKey, *apiKey)
		req.Header.Set(payments.HeaderAPISecret, *apiSecret)
	}
	extra.apply(req)

	// A transport of its own, closed on return: Main may run many times in one process.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport:     transport,
		Timeout:       callTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL would be printed in the Opaque form
		}
		return fmt.Errorf("%s %s%s: %w", method, server, target, err)
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s%s: reading the response: %w", method, server, target, err)
	}
	if len(respBody) > 0 && respBody[len(respBody)-1] != '\n' {
		respBody = append(respBody, '\n')
	}
	if _, err := inv.stdout.Write(respBody); err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		status := resp.Status
		if status == "" {
			status = fmt.Sprint(resp.StatusCode)
		}
		return &plainError{msg: "HTTP " + status}
	}
	return nil
}

// parseBaseURL checks -url: an http or https origin, without path, query or credentials,
// so that the request target is PATH exactly.
func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("-url %q: want http://HOST[:PORT] or https://HOST[:PORT]", s)
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, usagef("-url %q: want only scheme, host and port (the path goes in PATH)", s)
	}
	return u, nil
}

// requestURL returns the URL whose request line carries target byte for byte. The
// ordinary parsed form is preferred (it also works through a proxy); when Go would
// re-escape it, the path is sent as the URL's opaque part, which Go writes unchanged.
func requestURL(server *url.URL, target string) (*url.URL, error) {
	if !strings.HasPrefix(target, "/") {
		return nil, usagef("PATH %q must start with /", target)
	}
	for _, c := range []byte(target) {
		if c <= ' ' || c == 0x7f {
			return nil, usagef("PATH %q: spaces and control characters must be percent-encoded", target)
		}
	}
	if strings.Contains(target, "#") {
		return nil, usagef("PATH %q: a fragment (#) is never sent to a server", target)
	}
	if u, err := url.Parse(server.String() + target); err == nil && u.Host == server.Host && u.RequestURI() == target {
		return u, nil
	}
	path, query, hasQuery := strings.Cut(target, "?")
	u := &url.URL{Scheme: server.Scheme, Host: server.Host, Opaque: path, RawQuery: query, ForceQuery: hasQuery && query == ""}
	if strings.HasPrefix(path, "//") || u.RequestURI() != target {
		return nil, usagef("PATH %q cannot be sent unchanged", target)
	}
	return u, nil
}

// readBody returns the BODY argument: the literal text, the contents of @FILE, or
// standard input for @-.
func (inv *invocation) readBody(arg string) ([]byte, error) {
	name, isFile := strings.CutPrefix(arg, "@")
	switch {
	case !isFile:
		return []byte(arg), nil
	case name == "-":
		if inv.stdin == nil {
			return nil, nil
		}
		b, err := io.ReadAll(inv.stdin)
		if err != nil {
			return nil, fmt.Errorf("reading the body from standard input: %w", err)
		}
		return b, nil
	default:
		b, err := os.ReadFile(name) // #nosec G304 -- the operator names the file (@FILE) on their own command line, with their own rights
		if err != nil {
			return nil, fmt.Errorf("reading the body: %w", err)
		}
		return b, nil
	}
}

// headerFlag collects -header values.
type headerFlag struct {
	names  []string // canonical, in order of first appearance
	values http.Header
}

func (h *headerFlag) String() string { return "" }

func (h *headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || !isToken(name) {
		return errors.New("want 'Name: value'")
	}
	value = strings.Trim(value, " \t")
	for _, c := range []byte(value) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return errors.New("control characters are not allowed in a header value")
		}
	}
	if h.values == nil {
		h.values = http.Header{}
	}
	name = http.CanonicalHeaderKey(name)
	if _, seen := h.values[name]; !seen {
		h.names = append(h.names, name)
	}
	h.values[name] = append(h.values[name], value)
	return nil
}

// apply sets the collected headers on req, each replacing any value call set itself.
func (h *headerFlag) apply(req *http.Request) {
	for _, name := range h.names {
		values := h.values[name]
		if name == "Host" {
			req.Host = values[len(values)-1]
			continue
		}
		req.Header[name] = values
	}
}

// isSet reports whether the flag named name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// isToken reports whether s is an HTTP token (RFC 9110), as methods and header names are.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

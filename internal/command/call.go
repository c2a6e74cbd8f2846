package command

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
	"strings"
	"time"

	"github.com/platform-payments/payments"
)

// Call sends one request, as a platform or with a user-API key, and prints the answer.
var Call = &Command{
	Name:    "call",
	Summary: "Sign and send one request to the server and print the response body.",
	Usage:   "[-platform ID] [-secret S] [-sig SIGNATURE] [-timestamp T] [-api-key K -api-secret S] [-nosign] [-type CONTENT_TYPE] [-header 'Name: value']... [-expand] METHOD TARGET [BODY]",
	Details: `A platform request carries X-Platform-ID and X-Signature, signed with -secret (in a
scenario, $PLATFORM_ID and $PLATFORM_SECRET of the last platform create, unless given);
-sig sends the given signature instead. With -api-key and -api-secret the request goes to
the user-API with X-Api-Key and X-Api-Secret. An empty value leaves out its header;
-nosign sends no credentials at all.
-timestamp T sends X-Timestamp and signs it with the request, as a platform created with
-require-timestamp must: T is now (the server's clock in a scenario), now-400s or now+5m
(that far from it, in whole seconds), or anything else, sent and signed as written.
TARGET is the path and query, sent and signed byte for byte. BODY is a FILE, whose content
is sent without its one trailing newline, - for standard input, or, when it starts with {
or [, the JSON itself; -expand fills in its $VARS. A body goes with Content-Type:
application/json unless -type says otherwise (an empty -type sends none); -header adds a
header, or replaces one call would send, and may be repeated.
The response body is printed as received; redirects are not followed. paymentsd exits
with status 1 and "HTTP <status>" on stderr for a status other than 2xx; a scenario's
call succeeds whatever the status (check it with status).`,
	Uses: UsesServer,
	Run:  runCall,
}

// callFlags are call's flags, parsed, with the names of those given.
type callFlags struct {
	platformID, secret, sig, stamp, apiKey, apiSecret, contentType string
	nosign, expand                                                 bool
	extra                                                          headerFlag
	set                                                            map[string]bool
}

// keyed reports whether the call goes to the user-API with a key.
func (f *callFlags) keyed() bool { return f.set["api-key"] || f.set["api-secret"] }

// signing reports whether the call names platform credentials.
func (f *callFlags) signing() bool { return f.set["platform"] || f.set["secret"] || f.set["sig"] }

func runCall(ctx context.Context, x *Invocation, args []string) error {
	f, rest, err := parseCallFlags(x, args)
	if err != nil {
		return err
	}
	server, err := x.Host.Server()
	if err != nil {
		return err
	}
	var timestamp string
	if f.set["timestamp"] {
		if timestamp, err = Timestamp(f.stamp, server.Now); err != nil {
			return err
		}
	}
	r, err := ParseRequest(x.Host, rest, f.expand)
	if err != nil {
		return err
	}
	auth, err := f.credentials(server, r, timestamp)
	if err != nil {
		return err
	}
	req, err := f.request(ctx, server, r, auth)
	if err != nil {
		return err
	}
	return send(x, server, r, req)
}

// parseCallFlags parses call's flags and checks that they go together; it returns the
// words after them.
func parseCallFlags(x *Invocation, args []string) (*callFlags, []string, error) {
	f := &callFlags{set: map[string]bool{}}
	fs := x.FlagSet()
	fs.StringVar(&f.platformID, "platform", "", "sign as the platform with this `ID` (X-Platform-ID)")
	fs.StringVar(&f.secret, "secret", "", "the platform's signing `SECRET`")
	fs.StringVar(&f.sig, "sig", "", "send X-Signature `SIGNATURE` instead of signing")
	fs.StringVar(&f.stamp, "timestamp", "", "send X-Timestamp `T` and sign it: now, now-DURATION, now+DURATION or a value sent as written")
	fs.StringVar(&f.apiKey, "api-key", "", "call the user-API with this `KEY` (X-Api-Key)")
	fs.StringVar(&f.apiSecret, "api-secret", "", "the user-API `SECRET` (X-Api-Secret, with -api-key)")
	fs.BoolVar(&f.nosign, "nosign", false, "send no credentials")
	fs.StringVar(&f.contentType, "type", "", "send Content-Type `TYPE` (empty: none)")
	fs.Var(&f.extra, "header", "send the header `'Name: value'` too, replacing one of that name call would send; repeatable")
	fs.BoolVar(&f.expand, "expand", false, "fill in the $VARS of the body")
	if err := x.Parse(fs, args); err != nil {
		return nil, nil, err
	}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	switch {
	case f.nosign && (f.keyed() || f.signing()):
		return nil, nil, Usagef("-nosign sends no credentials: give no -platform, -secret, -sig, -api-key or -api-secret with it")
	case f.keyed() && f.signing():
		return nil, nil, Usagef("give -platform and -secret, or -api-key and -api-secret, not both")
	case f.keyed() && !(f.set["api-key"] && f.set["api-secret"]):
		return nil, nil, Usagef("-api-key and -api-secret go together")
	case f.keyed() && f.set["timestamp"]:
		return nil, nil, Usagef("-timestamp goes with a platform's request, not with -api-key")
	}
	return f, fs.Args(), nil
}

// credentials returns the headers that say who calls: the user-API key, or the platform
// and the signature of r (with its timestamp), or none.
func (f *callFlags) credentials(server Server, r Request, timestamp string) (http.Header, error) {
	auth := http.Header{}
	if timestamp != "" {
		auth.Set(payments.HeaderTimestamp, timestamp)
	}
	switch {
	case f.keyed():
		setNonEmpty(auth, payments.HeaderAPIKey, f.apiKey)
		setNonEmpty(auth, payments.HeaderAPISecret, f.apiSecret)
	case !f.nosign:
		id, haveID := given(f.set["platform"], f.platformID, server.PlatformID)
		key, haveKey := given(f.set["secret"], f.secret, server.Secret)
		if err := checkCredentials(f, server, haveID, haveKey); err != nil {
			return nil, err
		}
		setNonEmpty(auth, payments.HeaderPlatformID, id)
		sig := f.sig
		switch {
		case f.set["sig"]:
		case timestamp != "":
			sig = payments.SignTimestamped(key, r.Method, r.Target, r.Body, timestamp)
		default:
			sig = payments.Sign(key, r.Method, r.Target, r.Body)
		}
		setNonEmpty(auth, payments.HeaderSignature, sig)
	}
	return auth, nil
}

// checkCredentials refuses a platform call short of a platform id or of a secret (or
// signature), whether given (-platform, -secret) or defaulted (server.PlatformID, Secret),
// naming where the defaults come from when the server says.
func checkCredentials(f *callFlags, server Server, haveID, haveKey bool) error {
	named := server.PlatformIDFrom != "" && server.SecretFrom != ""
	switch {
	case haveID && (haveKey || f.set["sig"]):
		return nil
	case !haveID && !haveKey && !f.set["sig"] && named:
		return Usagef("credentials are required: -platform and -secret (or %s and %s), or -api-key and -api-secret (or -nosign)",
			server.PlatformIDFrom, server.SecretFrom)
	case !haveID && !haveKey && !f.set["sig"]:
		return Usagef("credentials are required: -platform and -secret, or -api-key and -api-secret (or -nosign)")
	case named && !f.signing(): // one default without the other
		set, unset := server.PlatformIDFrom, server.SecretFrom
		if !haveID {
			set, unset = unset, set
		}
		return Usagef("%s is set but %s is not: set both, or give -platform and -secret", set, unset)
	}
	return Usagef("-platform and -secret go together")
}

// request builds the HTTP request of r to server, with the credentials auth, the body's
// media type and the extra headers.
func (f *callFlags) request(ctx context.Context, server Server, r Request, auth http.Header) (*http.Request, error) {
	u, err := requestURL(server.URL, r.Target)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, server.URL.String(), bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	req.URL = u
	req.Header = auth
	req.Header.Set("User-Agent", "paymentsd")
	switch {
	case f.set["type"] && f.contentType != "":
		req.Header.Set("Content-Type", f.contentType)
	case !f.set["type"] && r.HasBody:
		req.Header.Set("Content-Type", "application/json")
	}
	f.extra.apply(req)
	return req, nil
}

// send sends req, prints the response body (ending in a newline) and hands the answer to
// the host.
func send(x *Invocation, server Server, r Request, req *http.Request) error {
	resp, err := server.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL would be printed in the Opaque form
		}
		return fmt.Errorf("%s %s%s: %w", r.Method, server.URL, r.Target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s%s: reading the response: %w", r.Method, server.URL, r.Target, err)
	}
	out := body
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out[:len(out):len(out)], '\n')
	}
	if _, err := x.Stdout.Write(out); err != nil {
		return err
	}
	return x.Host.Answered(resp, body)
}

// given returns a credential: the flag's value when it was set, else the host's default,
// and whether there is one at all.
func given(set bool, value, def string) (string, bool) {
	if set {
		return value, true
	}
	return def, def != ""
}

// setNonEmpty sets the header unless the value is empty: an empty flag leaves it out.
func setNonEmpty(h http.Header, name, value string) {
	if value != "" {
		h.Set(name, value)
	}
}

// Request is a request as a command line writes it: METHOD TARGET [BODY].
type Request struct {
	Method, Target string
	Body           []byte
	HasBody        bool // a BODY argument was given, even an empty file
}

// ParseRequest reads the arguments METHOD TARGET [BODY], BODY being a FILE (sent without
// its one trailing newline), - for standard input, or the JSON itself when it starts
// with { or [; with expand, the body's $VARS are filled in from the host.
func ParseRequest(h Host, args []string, expand bool) (Request, error) {
	if n := len(args); n < 2 || n > 3 {
		return Request{}, Usagef("want METHOD TARGET [BODY]; got %d argument%s", n, Plural(n))
	}
	r := Request{Method: args[0], Target: args[1]}
	if !isToken(r.Method) {
		return Request{}, Usagef("%q is not an HTTP method", r.Method)
	}
	if err := checkTarget(r.Target); err != nil {
		return Request{}, err
	}
	if len(args) == 3 {
		body, err := readBody(h, args[2])
		if err != nil {
			return Request{}, err
		}
		if expand {
			body = []byte(os.Expand(string(body), h.Getenv))
		}
		r.Body, r.HasBody = body, true
	}
	return r, nil
}

// readBody returns the body BODY stands for.
func readBody(h Host, arg string) ([]byte, error) {
	switch {
	case arg == "":
		return nil, Usagef("BODY is empty: give a FILE, - for standard input, or the JSON itself")
	case arg[0] == '{' || arg[0] == '[':
		return []byte(arg), nil
	}
	b, err := h.ReadFile(arg)
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	return bytes.TrimSuffix(b, []byte("\n")), nil
}

// Timestamp returns the X-Timestamp value -timestamp T stands for: now, the Unix seconds
// of the clock now reads; now+DURATION or now-DURATION, that far from it (whole seconds:
// now-400s, now+5m); anything else is the value itself, sent and signed as written
// (1795341600, or a malformed one).
func Timestamp(t string, now func() time.Time) (string, error) {
	if t == "" {
		return "", Usagef("-timestamp needs a value: now, now-400s, or the value to send")
	}
	offset, relative := strings.CutPrefix(t, "now")
	if !relative {
		return t, nil
	}
	var d time.Duration
	if offset != "" {
		var err error
		d, err = time.ParseDuration(offset)
		if err != nil || (offset[0] != '+' && offset[0] != '-') || d%time.Second != 0 {
			return "", Usagef("-timestamp %q: want now, now+DURATION or now-DURATION in whole seconds (now-400s), or the value to send", t)
		}
	}
	return payments.Timestamp(now().Add(d)), nil
}

// checkTarget refuses a TARGET that cannot be sent as written.
func checkTarget(target string) error {
	if !strings.HasPrefix(target, "/") {
		return Usagef("TARGET %q must start with /", target)
	}
	for _, c := range []byte(target) {
		if c <= ' ' || c == 0x7f {
			return Usagef("TARGET %q: spaces and control characters must be percent-encoded", target)
		}
	}
	if strings.Contains(target, "#") {
		return Usagef("TARGET %q: a fragment (#) is never sent to a server", target)
	}
	return nil
}

// requestURL returns the URL whose request line carries target byte for byte. The
// ordinary parsed form is preferred (it also works through a proxy); when Go would
// re-escape it, the path is sent as the URL's opaque part, which Go writes unchanged.
func requestURL(server *url.URL, target string) (*url.URL, error) {
	if u, err := url.Parse(server.String() + target); err == nil && u.Host == server.Host && u.RequestURI() == target {
		return u, nil
	}
	path, query, hasQuery := strings.Cut(target, "?")
	u := &url.URL{Scheme: server.Scheme, Host: server.Host, Opaque: path, RawQuery: query, ForceQuery: hasQuery && query == ""}
	if strings.HasPrefix(path, "//") || u.RequestURI() != target {
		return nil, Usagef("TARGET %q cannot be sent unchanged", target)
	}
	return u, nil
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

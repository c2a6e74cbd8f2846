package command

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments"
)

// testHost is a host with a server of the test's and the defaults a scenario has.
type testHost struct {
	server   Server
	dir      string
	stdin    string
	answered *http.Response
}

func (h *testHost) Flags(*Command, *flag.FlagSet) func() error { return nil }
func (h *testHost) Usage(c *Command) string                    { return c.Name + " " + c.Usage }
func (h *testHost) Service(context.Context, func(*payments.Service) error) error {
	return errors.New("no database")
}
func (h *testHost) ReadFile(name string) ([]byte, error) {
	if name == "-" {
		return []byte(h.stdin), nil
	}
	return os.ReadFile(filepath.Join(h.dir, name))
}
func (h *testHost) Getenv(name string) string { return map[string]string{"WHO": "Zoe"}[name] }
func (h *testHost) Server() (Server, error)   { return h.server, nil }
func (h *testHost) Answered(resp *http.Response, _ []byte) error {
	h.answered = resp
	return nil
}

// TestCallSends checks the request call writes, byte for byte where it matters: the one
// request building of paymentsd call and of a scenario's call.
func TestCallSends(t *testing.T) {
	type seen struct {
		method, target string
		header         http.Header
		body           string
	}
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{r.Method, r.RequestURI, r.Header.Clone(), string(b)}
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	clock := time.Unix(1795341600, 0)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte("{\"who\":\"$WHO\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	const platform = "7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41"
	tests := []struct {
		name       string
		defaults   bool // the host has a platform's credentials, as a scenario after platform create
		stdin      string
		args       []string
		wantTarget string
		wantBody   string
		wantHeader map[string]string // "" means absent
	}{
		{
			name:       "Signed",
			args:       []string{"-platform", platform, "-secret", "s3cret", "GET", "/a/b%2Fc?x=1&y=%7E&z"},
			wantTarget: "/a/b%2Fc?x=1&y=%7E&z",
			wantHeader: map[string]string{
				"X-Platform-ID": platform,
				"X-Signature":   payments.Sign("s3cret", "GET", "/a/b%2Fc?x=1&y=%7E&z", nil),
				"Content-Type":  "",
				"X-Api-Key":     "",
				"X-Timestamp":   "",
				"User-Agent":    "paymentsd",
			},
		},
		{
			name:       "SignedTimestamp",
			args:       []string{"-platform", platform, "-secret", "s3cret", "-timestamp", "1795341600", "POST", "/p?q=%2F", `{"a":1}`},
			wantTarget: "/p?q=%2F",
			wantBody:   `{"a":1}`,
			wantHeader: map[string]string{
				"X-Timestamp":  "1795341600",
				"X-Signature":  payments.SignTimestamped("s3cret", "POST", "/p?q=%2F", []byte(`{"a":1}`), "1795341600"),
				"Content-Type": "application/json",
			},
		},
		{
			name:       "SignedTimestampAsWritten",
			args:       []string{"-platform", platform, "-secret", "s3cret", "-timestamp", "-0005", "GET", "/p"},
			wantTarget: "/p",
			wantHeader: map[string]string{
				"X-Timestamp": "-0005",
				"X-Signature": payments.SignTimestamped("s3cret", "GET", "/p", nil, "-0005"),
			},
		},
		{
			name:       "SignedTimestampNow",
			args:       []string{"-platform", platform, "-secret", "s3cret", "-timestamp", "now-400s", "GET", "/p"},
			wantTarget: "/p",
			wantHeader: map[string]string{
				"X-Timestamp": "1795341200",
				"X-Signature": payments.SignTimestamped("s3cret", "GET", "/p", nil, "1795341200"),
			},
		},
		{
			name:       "BodyFileExpanded",
			args:       []string{"-platform", platform, "-secret", "s3cret", "-expand", "POST", "/p?", "body.json"},
			wantTarget: "/p?",
			wantBody:   `{"who":"Zoe"}`,
			wantHeader: map[string]string{
				"X-Signature":  payments.Sign("s3cret", "POST", "/p?", []byte(`{"who":"Zoe"}`)),
				"Content-Type": "application/json",
			},
		},
		{
			name:       "BodyStdin",
			stdin:      "a,b",
			args:       []string{"-platform", platform, "-secret", "s3cret", "-type", "text/csv", "PUT", "/x", "-"},
			wantTarget: "/x",
			wantBody:   "a,b",
			wantHeader: map[string]string{"Content-Type": "text/csv"},
		},
		{
			name:       "APIKey",
			args:       []string{"-api-key", "k", "-api-secret", "s", "-header", "X-Request-ID: abc", "-header", "Accept:  text/plain ", "DELETE", "/x", "{}"},
			wantTarget: "/x",
			wantBody:   "{}",
			wantHeader: map[string]string{
				"X-Api-Key":     "k",
				"X-Api-Secret":  "s",
				"X-Request-Id":  "abc",
				"Accept":        "text/plain",
				"X-Platform-Id": "",
				"X-Signature":   "",
			},
		},
		{
			name:       "HeaderReplaces",
			args:       []string{"-api-key", "k", "-api-secret", "s", "-header", "Content-Type: text/csv", "-header", "x-api-key:", "PUT", "/x", "[1]"},
			wantTarget: "/x",
			wantBody:   "[1]",
			wantHeader: map[string]string{"Content-Type": "text/csv", "X-Api-Key": "", "X-Api-Secret": "s"},
		},
		{
			name:       "Defaults",
			defaults:   true,
			args:       []string{"GET", "/p"},
			wantTarget: "/p",
			wantHeader: map[string]string{"X-Platform-ID": platform, "X-Signature": payments.Sign("default-secret", "GET", "/p", nil)},
		},
		{
			name:       "DefaultsEmptyPlatform",
			defaults:   true,
			args:       []string{"-platform", "", "-sig", "00", "-type", "", "GET", "/p", "{}"},
			wantTarget: "/p",
			wantBody:   "{}",
			wantHeader: map[string]string{"X-Platform-ID": "", "X-Signature": "00", "Content-Type": ""},
		},
		{
			name:       "NoSign",
			defaults:   true,
			args:       []string{"-nosign", "-timestamp", "yesterday", "GET", "/p"},
			wantTarget: "/p",
			wantHeader: map[string]string{"X-Platform-ID": "", "X-Signature": "", "X-Timestamp": "yesterday"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &testHost{dir: dir, stdin: tt.stdin, server: Server{URL: u, Client: srv.Client(), Now: func() time.Time { return clock }}}
			if tt.defaults {
				h.server.PlatformID, h.server.Secret = platform, "default-secret"
			}
			var stdout bytes.Buffer
			x := &Invocation{Command: Call, Host: h, Stdout: &stdout, Stderr: io.Discard}
			if err := Call.Run(context.Background(), x, tt.args); err != nil {
				t.Fatal(err)
			}
			if stdout.String() != "{\"ok\":true}\n" || h.answered == nil {
				t.Errorf("stdout %q, answered %v", stdout.String(), h.answered != nil)
			}
			if got.target != tt.wantTarget || got.body != tt.wantBody {
				t.Errorf("server saw %s %s %q, want %s %q", got.method, got.target, got.body, tt.wantTarget, tt.wantBody)
			}
			for name, want := range tt.wantHeader {
				if v := got.header.Get(name); v != want {
					t.Errorf("header %s = %q, want %q", name, v, want)
				}
			}
		})
	}
}

// TestParseExpiry is the one reading of card add -exp: paymentsd's and a scenario's
// parsers once disagreed on "+1/2030".
func TestParseExpiry(t *testing.T) {
	for s, want := range map[string][2]int{"12/2030": {12, 2030}, "1/2031": {1, 2031}, "07/2031": {7, 2031}, "00/0000": {0, 0}} {
		m, y, err := ParseExpiry(s)
		if err != nil || m != want[0] || y != want[1] {
			t.Errorf("ParseExpiry(%q) = %d, %d, %v; want %v", s, m, y, err, want)
		}
	}
	for _, s := range []string{"+1/2030", "-1/2030", "1/+203", "01/-203", " 1/2030", "1/2030 ", "012/2030", "12/30", "12-2030", "Dec/2030", "", "/", "12/20301"} {
		var ue *UsageError
		if _, _, err := ParseExpiry(s); !errors.As(err, &ue) || !strings.Contains(ue.Msg, "is not MM/YYYY") {
			t.Errorf("ParseExpiry(%q): %v, want a usage error", s, err)
		}
	}
}

// A call without a platform's full credentials is a usage error naming where the host's
// defaults come from, when it says (paymentsd's variables); a scenario's says none.
func TestCallMissingCredentials(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:1")
	named := Server{URL: u, PlatformIDFrom: "$PAYMENTS_PLATFORM_ID", SecretFrom: "$PAYMENTS_PLATFORM_SECRET"}
	withID, withSecret := named, named
	withID.PlatformID, withSecret.Secret = "7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41", "s"
	for _, tt := range []struct {
		name   string
		server Server
		args   []string
		want   string
	}{
		{"Scenario", Server{URL: u}, nil,
			"credentials are required: -platform and -secret, or -api-key and -api-secret (or -nosign)"},
		{"Named", named, nil,
			"credentials are required: -platform and -secret (or $PAYMENTS_PLATFORM_ID and $PAYMENTS_PLATFORM_SECRET), or -api-key and -api-secret (or -nosign)"},
		{"OnlyID", withID, nil,
			"$PAYMENTS_PLATFORM_ID is set but $PAYMENTS_PLATFORM_SECRET is not: set both, or give -platform and -secret"},
		{"OnlySecret", withSecret, nil,
			"$PAYMENTS_PLATFORM_SECRET is set but $PAYMENTS_PLATFORM_ID is not: set both, or give -platform and -secret"},
		{"FlagWithoutSecret", named, []string{"-platform", "7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41"},
			"-platform and -secret go together"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := &Invocation{Command: Call, Host: &testHost{server: tt.server}, Stdout: io.Discard, Stderr: io.Discard}
			err := Call.Run(context.Background(), x, append(tt.args, "GET", "/p"))
			var ue *UsageError
			if !errors.As(err, &ue) || ue.Msg != tt.want {
				t.Errorf("error %v, want the usage error %q", err, tt.want)
			}
		})
	}
}

// A flag whose value reads its own variable (OwnEnv) is left alone by a command's
// EnvPrefix; the others are set from theirs.
func TestSetFromEnvLeavesOwnEnv(t *testing.T) {
	t.Setenv("TEST_PLAIN", "from-env")
	t.Setenv("TEST_OWN", "from-env")
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	plain := fs.String("plain", "default", "")
	var own ownFlag
	fs.Var(&own, "own", "")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := setFromEnv(fs, "TEST_"); err != nil {
		t.Fatal(err)
	}
	if *plain != "from-env" || own != "" || IsSet(fs, "own") {
		t.Errorf("-plain %q, -own %q (set: %v); want from-env, \"\" (false)", *plain, own, IsSet(fs, "own"))
	}
}

// ownFlag is a string flag that reads its own variable.
type ownFlag string

func (f *ownFlag) String() string     { return string(*f) }
func (f *ownFlag) Set(s string) error { *f = ownFlag(s); return nil }
func (*ownFlag) ReadsOwnEnv()         {}

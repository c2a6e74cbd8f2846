package scenario

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments"
)

// response is the last answer a script received.
type response struct {
	status int
	header http.Header
	body   []byte
}

// headerList collects repeated -header 'Name: value' flags.
type headerList [][2]string

func (h *headerList) String() string { return fmt.Sprint(*h) }

func (h *headerList) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("want 'Name: value', have %q", s)
	}
	*h = append(*h, [2]string{name, strings.TrimSpace(value)})
	return nil
}

// requestFlags are the flags call and userapi share.
type requestFlags struct {
	contentType string
	headers     headerList
	expand      bool
}

func (f *requestFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.contentType, "type", "", "")
	fs.Var(&f.headers, "header", "")
	fs.BoolVar(&f.expand, "expand", false, "")
}

// parseFlags parses args with fs, aborting with the command's usage line on any error,
// and returns the positional arguments and the set of flags given.
func parseFlags(ts *testscript.TestScript, name string, fs *flag.FlagSet, args []string) ([]string, map[string]bool) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		usagef(ts, name, "%v", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return fs.Args(), set
}

// target is a request as a script wrote it: METHOD TARGET [BODYFILE].
type target struct {
	method, target string
	body           []byte
	hasBody        bool
}

func parseTarget(ts *testscript.TestScript, name string, pos []string, expand bool) target {
	if len(pos) < 2 || len(pos) > 3 || pos[0] == "" || !strings.HasPrefix(pos[1], "/") || strings.HasPrefix(pos[1], "//") {
		usage(ts, name)
	}
	t := target{method: pos[0], target: pos[1]}
	if len(pos) == 3 {
		t.body, t.hasBody = readBody(ts, pos[2], expand), true
	}
	return t
}

// readBody returns the contents of an archive file as a request body: without its one
// trailing newline (so that inline files read naturally), with $VARS expanded if asked.
func readBody(ts *testscript.TestScript, file string, expand bool) []byte {
	s := ts.ReadFile(file)
	if expand {
		s = os.Expand(s, ts.Getenv)
	}
	return []byte(strings.TrimSuffix(s, "\n"))
}

// cmdCall: a signed platform request.
func cmdCall(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "call", " (assert the answer with status)")
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	var rf requestFlags
	rf.register(fs)
	platformID := fs.String("platform", ts.Getenv("PLATFORM_ID"), "")
	secret := fs.String("secret", ts.Getenv("PLATFORM_SECRET"), "")
	sig := fs.String("sig", "", "")
	nosign := fs.Bool("nosign", false, "")
	stamp := fs.String("timestamp", "", "")
	pos, set := parseFlags(ts, "call", fs, args)
	t := parseTarget(ts, "call", pos, rf.expand)
	timestamp := timestampValue(ts, "call", *stamp, set["timestamp"])

	auth := http.Header{}
	if timestamp != "" {
		auth.Set(payments.HeaderTimestamp, timestamp)
	}
	if !*nosign {
		if *platformID != "" {
			auth.Set(payments.HeaderPlatformID, *platformID)
		}
		switch {
		case set["sig"]:
		case timestamp != "":
			*sig = payments.SignTimestamped(*secret, t.method, t.target, t.body, timestamp)
		default:
			*sig = payments.Sign(*secret, t.method, t.target, t.body)
		}
		if *sig != "" {
			auth.Set(payments.HeaderSignature, *sig)
		}
	}
	send(ts, t, auth, rf, set["type"])
}

// timestampValue returns the X-Timestamp value that -timestamp T stands for ("" when the
// flag is not given): now, the Unix seconds of the service's clock; now+DURATION or
// now-DURATION, that far from it (whole seconds: now-400s, now+5m); anything else is the
// value itself, sent and signed as written (1795341600, or a malformed one).
func timestampValue(ts *testscript.TestScript, name, t string, given bool) string {
	if !given {
		return ""
	}
	if t == "" {
		usagef(ts, name, "-timestamp needs a value: now, now-400s, or the value to send")
	}
	offset, relative := strings.CutPrefix(t, "now")
	if !relative {
		return t
	}
	var d time.Duration
	if offset != "" {
		var err error
		d, err = time.ParseDuration(offset)
		if err != nil || (offset[0] != '+' && offset[0] != '-') || d%time.Second != 0 {
			usagef(ts, name, "-timestamp %q: want now, now+DURATION or now-DURATION in whole seconds (now-400s), or the value to send", t)
		}
	}
	return payments.Timestamp(getState(ts).svc.Now().Add(d))
}

// cmdUserAPI: a user-API request.
func cmdUserAPI(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "userapi", " (assert the answer with status)")
	fs := flag.NewFlagSet("userapi", flag.ContinueOnError)
	var rf requestFlags
	rf.register(fs)
	key := fs.String("key", ts.Getenv("API_KEY"), "")
	secret := fs.String("secret", ts.Getenv("API_SECRET"), "")
	nokey := fs.Bool("nokey", false, "")
	pos, set := parseFlags(ts, "userapi", fs, args)
	t := parseTarget(ts, "userapi", pos, rf.expand)

	auth := http.Header{}
	if !*nokey {
		if *key != "" {
			auth.Set(payments.HeaderAPIKey, *key)
		}
		if *secret != "" {
			auth.Set(payments.HeaderAPISecret, *secret)
		}
	}
	send(ts, t, auth, rf, set["type"])
}

// send makes the request, records the answer as the last response and prints its body.
func send(ts *testscript.TestScript, t target, auth http.Header, rf requestFlags, typeGiven bool) {
	st := getState(ts)
	req, err := http.NewRequest(t.method, st.srv.URL, bytes.NewReader(t.body))
	if err != nil {
		ts.Fatalf("%s %s: %v", t.method, t.target, err)
	}
	// Send the target byte for byte: an opaque URL is written to the request line as it
	// is, where a parsed one would be re-escaped (and the signature would no longer match).
	path, query, hasQuery := strings.Cut(t.target, "?")
	req.URL.Opaque, req.URL.RawQuery, req.URL.ForceQuery = path, query, hasQuery && query == ""
	for name, values := range auth {
		req.Header[name] = values
	}
	switch {
	case typeGiven && rf.contentType != "":
		req.Header.Set("Content-Type", rf.contentType)
	case !typeGiven && t.hasBody:
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range rf.headers {
		req.Header.Add(h[0], h[1])
	}
	resp, err := st.client.Do(req)
	if err != nil {
		ts.Fatalf("%s %s: %v", t.method, t.target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.Fatalf("%s %s: reading the response: %v", t.method, t.target, err)
	}
	st.last = &response{status: resp.StatusCode, header: resp.Header, body: body}
	fmt.Fprintf(ts.Stderr(), "%s\n", resp.Status)
	out := ts.Stdout()
	_, err = out.Write(body)
	ts.Check(err)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		fmt.Fprintln(out)
	}
}

// cmdSign: sign [-secret S] [-upper] [-timestamp T] [-expand] VAR METHOD TARGET [BODYFILE]
func cmdSign(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "sign", "")
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	secret := fs.String("secret", ts.Getenv("PLATFORM_SECRET"), "")
	upper := fs.Bool("upper", false, "")
	stamp := fs.String("timestamp", "", "")
	expand := fs.Bool("expand", false, "")
	pos, set := parseFlags(ts, "sign", fs, args)
	if len(pos) < 1 || pos[0] == "" {
		usage(ts, "sign")
	}
	t := parseTarget(ts, "sign", pos[1:], *expand)
	sig := payments.Sign(*secret, t.method, t.target, t.body)
	if timestamp := timestampValue(ts, "sign", *stamp, set["timestamp"]); timestamp != "" {
		sig = payments.SignTimestamped(*secret, t.method, t.target, t.body, timestamp)
	}
	if *upper {
		sig = strings.ToUpper(sig)
	}
	ts.Setenv(pos[0], sig)
}

// lastResponse returns the last response, aborting when there is none yet.
func lastResponse(ts *testscript.TestScript, name string) *response {
	r := getState(ts).last
	if r == nil {
		ts.Fatalf("%s: no response yet (use call or userapi first)", name)
	}
	return r
}

// cmdStatus: status CODE
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		usage(ts, "status")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil || want < 100 || want > 999 {
		usagef(ts, "status", "CODE must be an HTTP status, 100 to 999, not %q", args[0])
	}
	r := lastResponse(ts, "status")
	switch {
	case neg && r.status == want:
		ts.Fatalf("unexpected status\n    expected: any status but %s\n    actual:   %s\n    response body:\n%s",
			statusText(want), statusText(r.status), showBody(r.body))
	case !neg && r.status != want:
		ts.Fatalf("unexpected status\n    expected: %s\n    actual:   %s\n    response body:\n%s",
			statusText(want), statusText(r.status), showBody(r.body))
	}
}

// statusText writes a status as its code and, when it has one, its name: "404 Not Found".
func statusText(code int) string {
	if text := http.StatusText(code); text != "" {
		return strconv.Itoa(code) + " " + text
	}
	return strconv.Itoa(code)
}

// cmdHeader: header NAME VALUE_REGEXP
func cmdHeader(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || args[0] == "" {
		usage(ts, "header")
	}
	re, err := regexp.Compile(args[1])
	if err != nil {
		usagef(ts, "header", "VALUE_REGEXP: %v", err)
	}
	values := lastResponse(ts, "header").header.Values(args[0])
	matched := false
	for _, v := range values {
		if re.MatchString(v) {
			matched = true
		}
	}
	actual := "no such header"
	if len(values) > 0 {
		actual = quoteAll(values)
	}
	switch {
	case neg && matched:
		ts.Fatalf("unexpected header %s\n    expected: no value matching %s\n    actual:   %s", args[0], args[1], actual)
	case !neg && !matched:
		ts.Fatalf("unexpected header %s\n    expected: a value matching %s\n    actual:   %s", args[0], args[1], actual)
	}
}

// quoteAll writes values as quoted strings separated by commas.
func quoteAll(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(v)
	}
	return strings.Join(quoted, ", ")
}

// bodyLines is how many lines of a response body a failure message shows.
const bodyLines = 40

// showBody returns a response body for a failure message: indented when it is JSON,
// the text otherwise, at most bodyLines lines of it, each indented by six spaces.
func showBody(body []byte) string {
	if len(bytes.TrimSpace(body)) == 0 {
		return "      (empty)"
	}
	text := string(body)
	var indented bytes.Buffer
	if err := json.Indent(&indented, body, "", "  "); err == nil {
		text = indented.String() // in the order the server wrote it
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	more := len(lines) - bodyLines
	if more > 0 {
		lines = lines[:bodyLines]
	}
	var b strings.Builder
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("      " + line)
	}
	if more > 0 {
		fmt.Fprintf(&b, "\n      … %d more lines", more)
	}
	return b.String()
}

package scenario

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/command"
)

// response is the last answer a script received.
type response struct {
	status int
	header http.Header
	body   []byte
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

// cmdSign: sign [-secret S] [-upper] [-timestamp T] [-expand] VAR METHOD TARGET [BODY]
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
	r, err := command.ParseRequest(&host{ts: ts}, pos[1:], *expand)
	if err != nil {
		usagef(ts, "sign", "%s", command.OneLine(err.Error()))
	}
	sig := payments.Sign(*secret, r.Method, r.Target, r.Body)
	if set["timestamp"] {
		timestamp, err := command.Timestamp(*stamp, getState(ts).svc.Now)
		if err != nil {
			usagef(ts, "sign", "%s", err)
		}
		sig = payments.SignTimestamped(*secret, r.Method, r.Target, r.Body, timestamp)
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
		ts.Fatalf("%s: no response yet (use call first)", name)
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

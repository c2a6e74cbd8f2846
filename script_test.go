package payments_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/platform-payments/payments/scenario"
)

// TestScripts runs the end-to-end scenarios in testdata/*.txtar against the real
// handler and database (see package scenario for the commands).
func TestScripts(t *testing.T) {
	scenario.Run(t, "testdata")
}

// TestExamples runs the scenarios the README shows testers, in testdata/examples.
func TestExamples(t *testing.T) {
	scenario.Run(t, "testdata/examples")
}

// routePattern finds the routes in httpserver/routes.go: s.route(mux, "METHOD /pattern", ...).
var routePattern = regexp.MustCompile(`s\.route\(\s*mux,\s*"([A-Z]+) (/[^"]*)"`)

// TestRoutesHaveScenarios fails when a route of the API has no scenario: no call line in
// testdata/*.txtar sends its method to a target its pattern matches.
func TestRoutesHaveScenarios(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("httpserver", "routes.go"))
	if err != nil {
		t.Fatal(err)
	}
	routes := routePattern.FindAllStringSubmatch(string(src), -1)
	if len(routes) != 14 {
		t.Fatalf("found %d routes in httpserver/routes.go, want the fourteen of the API", len(routes))
	}
	requests := scenarioRequests(t, "testdata")
	for i, route := range routes {
		method, pattern := route[1], route[2]
		covered := false
		for _, r := range requests {
			if r.method == method && matchesPattern(pattern, r.target) {
				covered = true
				break
			}
		}
		if !covered {
			t.Errorf("route %d, %s %s, has no scenario in testdata/*.txtar", i+1, method, pattern)
		}
	}
}

// request is one call line of a scenario.
type request struct {
	method, target string
}

// scenarioRequests returns the requests the scripts in dir/*.txtar send.
func scenarioRequests(t *testing.T, dir string) []request {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var requests []request
	for _, file := range files {
		archive, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(archive.Comment), "\n") {
			if r, ok := parseRequest(line); ok {
				requests = append(requests, r)
			}
		}
	}
	return requests
}

// methodWord is how an HTTP method is written in a scenario.
var methodWord = regexp.MustCompile(`^[A-Z]+$`)

// parseRequest reads a script line "call ... METHOD TARGET [BODY]": the first upper-case word followed by a word starting with "/" is the method and target,
// whatever flags come before them.
func parseRequest(line string) (request, bool) {
	words := scriptWords(line)
	for len(words) > 0 && (words[0] == "!" || strings.HasPrefix(words[0], "[")) {
		words = words[1:] // a negation or a condition
	}
	if len(words) == 0 || words[0] != "call" {
		return request{}, false
	}
	for i := 1; i+1 < len(words); i++ {
		if methodWord.MatchString(words[i]) && strings.HasPrefix(words[i+1], "/") {
			return request{method: words[i], target: words[i+1]}, true
		}
	}
	return request{}, false
}

// scriptWords splits a script line into words as testscript does: at spaces, except
// inside single quotes; an unquoted "#" starts a comment.
func scriptWords(line string) []string {
	var words []string
	var word strings.Builder
	inWord, quoted := false, false
	for _, c := range line {
		switch {
		case c == '\'':
			quoted, inWord = !quoted, true
		case !quoted && c == '#':
			if inWord {
				words = append(words, word.String())
			}
			return words
		case !quoted && (c == ' ' || c == '\t' || c == '\r'):
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// matchesPattern reports whether a scenario's target would reach a route's pattern: the
// same segments, a {name} matching any one non-empty segment (a $VAR among them), the
// query string ignored.
func matchesPattern(pattern, target string) bool {
	path, _, _ := strings.Cut(target, "?")
	want := strings.Split(pattern, "/")
	have := strings.Split(path, "/")
	if len(want) != len(have) {
		return false
	}
	for i, w := range want {
		if strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}") {
			if have[i] == "" {
				return false
			}
			continue
		}
		if w != have[i] {
			return false
		}
	}
	return true
}

func TestMatchesPattern(t *testing.T) {
	for _, c := range []struct {
		pattern, target string
		match           bool
	}{
		{"/api/platform/users/get/{user_id}", "/api/platform/users/get/$USER_ID", true},
		{"/api/platform/users/get/{user_id}", "/api/platform/users/get/7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41", true},
		{"/api/platform/users/get/{user_id}", "/api/platform/users/get/", false},
		{"/api/platform/users/get/{user_id}", "/api/platform/users/get/a/b", false},
		{"/api/platform/cross-border/rates", "/api/platform/cross-border/rates?payout_currency=INR", true},
		{"/api/platform/cross-border/payee/bank/{user_id}/{bank_uuid}", "/api/platform/cross-border/payee/bank/$U/$B", true},
		{"/api/platform/cross-border/payee/bank/{user_id}", "/api/platform/cross-border/payee/bank/$U/$B", false},
		{"/api/platform/users/create", "/api/platform/users/list", false},
	} {
		if got := matchesPattern(c.pattern, c.target); got != c.match {
			t.Errorf("matchesPattern(%s, %s) = %v, want %v", c.pattern, c.target, got, c.match)
		}
	}
	for line, want := range map[string]request{
		"call POST /api/platform/users/create alice.json":                                             {"POST", "/api/platform/users/create"},
		"call -platform $A_ID -secret WRONG GET /api/platform/users/get/$ID":                          {"GET", "/api/platform/users/get/$ID"},
		"call -header 'X-Request-ID: a b' GET '/api/platform/cross-border/rates?payout_currency=INR'": {"GET", "/api/platform/cross-border/rates?payout_currency=INR"},
		"call -api-key $K -api-secret $S POST /api/user-api/payee/create payee.json":                  {"POST", "/api/user-api/payee/create"},
	} {
		if got, ok := parseRequest(line); !ok || got != want {
			t.Errorf("parseRequest(%q) = %v, %v; want %v", line, got, ok, want)
		}
	}
	for _, line := range []string{"# call GET /x", "  # call GET /x", "status 200", "call #GET /x", "sign SIG GET /api/platform/users/get/$ID", "call"} {
		if got, ok := parseRequest(line); ok {
			t.Errorf("parseRequest(%q) = %v, want no request", line, got)
		}
	}
}

// TestREADMEScenario runs the example scenario of the README's "Scenario toolkit" section,
// so that what a tester copies from it works.
func TestREADMEScenario(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Scenario toolkit\n")
	_, block, _ := strings.Cut(section, "\n```\n")
	script, _, ok := strings.Cut(block, "\n```\n")
	if !ok || !strings.Contains(script, "\n-- ") {
		t.Fatal("README.md: no example scenario (a ``` block with files) in the Scenario toolkit section")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "readme_example.txtar"), []byte(script+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	scenario.Run(t, dir)
}

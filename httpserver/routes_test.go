package httpserver

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// scenarioDir holds the end-to-end scenarios of the module (run by the root package's
// TestScripts), which cover every route.
var scenarioDir = filepath.Join("..", "testdata")

// TestRoutes checks the route table itself: the fourteen endpoints of the specification
// and the fourteen of webhooks and events, each once, each pattern a method and a path as
// http.ServeMux takes them.
func TestRoutes(t *testing.T) {
	if len(routes) != 14+14 {
		t.Errorf("%d routes, want the fourteen of the specification and fourteen of webhooks and events", len(routes))
	}
	seen := map[string]bool{}
	for i, rt := range routes {
		method, path, ok := strings.Cut(rt.pattern, " ")
		if !ok || !methodWord.MatchString(method) || !strings.HasPrefix(path, "/api/") {
			t.Errorf("route %d: pattern %q, want METHOD /api/...", i+1, rt.pattern)
		}
		if seen[rt.pattern] {
			t.Errorf("route %d: %s mounted twice", i+1, rt.pattern)
		}
		seen[rt.pattern] = true
		if method == http.MethodGet && rt.body == withBody {
			t.Errorf("route %d: %s takes a JSON body", i+1, rt.pattern)
		}
		if method == http.MethodGet && rt.effect != reads {
			t.Errorf("route %d: %s changes something", i+1, rt.pattern)
		}
		if rt.handler == nil {
			t.Errorf("route %d: %s has no handler", i+1, rt.pattern)
		}
	}
}

// TestRoutesHaveScenarios fails when a route of the table has no scenario: no call line in
// the module's testdata/*.txtar sends its method to a target its pattern matches.
func TestRoutesHaveScenarios(t *testing.T) {
	requests := scenarioRequests(t, scenarioDir)
	if len(requests) == 0 {
		t.Fatalf("no requests in %s/*.txtar", scenarioDir)
	}
	for i, rt := range routes {
		method, pattern, _ := strings.Cut(rt.pattern, " ")
		covered := false
		for _, r := range requests {
			if r.method == method && matchesPattern(pattern, r.target) {
				covered = true
				break
			}
		}
		if !covered {
			t.Errorf("route %d, %s, has no scenario in %s/*.txtar", i+1, rt.pattern, scenarioDir)
		}
	}
}

// scenarioRequest is one call line of a scenario.
type scenarioRequest struct {
	method, target string
}

// scenarioRequests returns the requests the scripts in dir/*.txtar send.
func scenarioRequests(t *testing.T, dir string) []scenarioRequest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var requests []scenarioRequest
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

// parseRequest reads a script line "call ... METHOD TARGET [BODY]": the
// first upper-case word followed by a word starting with "/" is the method and target,
// whatever flags come before them.
func parseRequest(line string) (scenarioRequest, bool) {
	words := scriptWords(line)
	for len(words) > 0 && (words[0] == "!" || strings.HasPrefix(words[0], "[")) {
		words = words[1:] // a negation or a condition
	}
	if len(words) == 0 || words[0] != "call" {
		return scenarioRequest{}, false
	}
	for i := 1; i+1 < len(words); i++ {
		if methodWord.MatchString(words[i]) && strings.HasPrefix(words[i+1], "/") {
			return scenarioRequest{method: words[i], target: words[i+1]}, true
		}
	}
	return scenarioRequest{}, false
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
	for line, want := range map[string]scenarioRequest{
		"call POST /api/platform/users/create alice.json":                                             {"POST", "/api/platform/users/create"},
		"call -platform $A_ID -secret WRONG GET /api/platform/users/get/$ID":                          {"GET", "/api/platform/users/get/$ID"},
		"call -header 'X-Request-ID: a b' GET '/api/platform/cross-border/rates?payout_currency=INR'": {"GET", "/api/platform/cross-border/rates?payout_currency=INR"},
		"call -nosign POST /api/user-api/payee/create payee.json":                                     {"POST", "/api/user-api/payee/create"},
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

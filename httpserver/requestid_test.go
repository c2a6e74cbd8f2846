package httpserver

import (
	"regexp"
	"strings"
	"testing"
)

// TestRequestID: a client's X-Request-ID is kept exactly when CONTRACT section 3 says
// (the rule the pattern states), and the ids made otherwise are distinct and plain.
func TestRequestID(t *testing.T) {
	contract := regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	for _, id := range []string{"", "a", "req-1.2_3", strings.Repeat("x", 128), strings.Repeat("x", 129),
		"with space", "é", "a/b", "a\nb", "ABC-xyz_09.", "a:b", "\x00"} {
		if got, want := validRequestID(id), contract.MatchString(id); got != want {
			t.Errorf("validRequestID(%q) = %v, want %v", id, got, want)
		}
	}
	seen := map[string]bool{}
	for range 10_000 {
		id := newRequestID()
		if len(id) != 24 || !contract.MatchString(id) || seen[id] {
			t.Fatalf("newRequestID() = %q: want 24 new hex digits", id)
		}
		seen[id] = true
	}
}

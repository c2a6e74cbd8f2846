package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README's table of serve's environment variables names every variable serve -h
// lists, and no other.
func TestREADMEListsServeEnvironment(t *testing.T) {
	r := runT(t, "", "serve", "-h")
	_, env, ok := strings.Cut(r.stdout+r.stderr, "\nEnvironment")
	if !ok {
		t.Fatalf("serve -h lists no environment:\n%s%s", r.stdout, r.stderr)
	}
	listed := regexp.MustCompile(`(?m)^\s+(PAYMENTS_[A-Z_]+)\s+-`).FindAllStringSubmatch(env, -1)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]bool{}
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "| `PAYMENTS_") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, name := range regexp.MustCompile("`(PAYMENTS_[A-Z_]+)`").FindAllStringSubmatch(cell, -1) {
			table[name[1]] = true
		}
	}
	if len(listed) == 0 {
		t.Fatalf("no variables found in serve -h:\n%s", env)
	}
	for _, m := range listed {
		if !table[m[1]] {
			t.Errorf("README's table leaves out %s", m[1])
		}
		delete(table, m[1])
	}
	for name := range table {
		t.Errorf("README's table lists %s, which serve -h does not", name)
	}
}

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The table of serve's environment variables in docs/cli.md names every variable serve -h
// lists, and no other.
func TestCLIDocListsServeEnvironment(t *testing.T) {
	r := runT(t, "", "serve", "-h")
	_, env, ok := strings.Cut(r.stdout+r.stderr, "\nEnvironment")
	if !ok {
		t.Fatalf("serve -h lists no environment:\n%s%s", r.stdout, r.stderr)
	}
	listed := regexp.MustCompile(`(?m)^\s+(PAYMENTS_[A-Z_]+)\s+-`).FindAllStringSubmatch(env, -1)
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
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
			t.Errorf("docs/cli.md's table leaves out %s", m[1])
		}
		delete(table, m[1])
	}
	for name := range table {
		t.Errorf("docs/cli.md's table lists %s, which serve -h does not", name)
	}
}

// The README's table of commands names every command paymentsd -h lists, and no other.
func TestREADMEListsCommands(t *testing.T) {
	r := runT(t, "", "-h")
	_, list, ok := strings.Cut(r.stdout+r.stderr, "\nCommands:\n")
	if !ok {
		t.Fatalf("paymentsd -h lists no commands:\n%s%s", r.stdout, r.stderr)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	listed := regexp.MustCompile(`(?m)^  (\S+(?: [a-z]+)?)  `).FindAllStringSubmatch(list, -1)
	if len(listed) == 0 {
		t.Fatalf("no commands found in paymentsd -h:\n%s", list)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Commands\n")
	section, _, _ = strings.Cut(section, "\n## ")
	table := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, name := range regexp.MustCompile("`([a-z ]+)`").FindAllStringSubmatch(cell, -1) {
			table[name[1]] = true
		}
	}
	for _, m := range listed {
		if !table[m[1]] {
			t.Errorf("README's table of commands leaves out %s", m[1])
		}
		delete(table, m[1])
	}
	for name := range table {
		t.Errorf("README's table of commands lists %s, which paymentsd -h does not", name)
	}
}

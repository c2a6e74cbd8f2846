package scenario

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestCommands runs the scripts that exercise the commands themselves.
func TestCommands(t *testing.T) {
	Run(t, "testdata")
}

// TestDocListsCommands keeps the package documentation and the usage lines in step with
// the commands, as cmd/go does with its list of script commands.
func TestDocListsCommands(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range checkedUsages(t) {
		if !strings.Contains(string(doc), "//\t"+u.line+"\n") {
			t.Errorf("doc.go does not show the usage line of %s: %s", u.name, u.line)
		}
		for _, e := range u.sets {
			if !strings.Contains(string(doc), "$"+e.Var) {
				t.Errorf("doc.go does not say that %s sets $%s", u.name, e.Var)
			}
		}
	}
}

// The testers' reference is a section of docs/scenarios.md: it must list every command as
// a "- `USAGE LINE` ..." item, and nothing else that way.
const (
	referenceFile    = "../docs/scenarios.md"
	referenceSection = "## Commands"
)

// TestScenariosDocListsCommands keeps the testers' reference in docs/scenarios.md in step
// with the commands: a command added, renamed or given another usage line fails here until
// the reference says so too.
func TestScenariosDocListsCommands(t *testing.T) {
	doc, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	reference := markdownSection(string(doc), referenceSection)
	if reference == "" {
		t.Fatalf("%s has no %q section", referenceFile, referenceSection)
	}
	listed := map[string]string{} // usage line -> the text of its item
	var item string
	for _, line := range strings.Split(reference, "\n") {
		if rest, ok := strings.CutPrefix(line, "- `"); ok {
			usage, _, _ := strings.Cut(rest, "`")
			item = usage
			listed[item] = ""
		}
		if item != "" {
			listed[item] += line + "\n"
		}
		if strings.TrimSpace(line) == "" {
			item = ""
		}
	}
	known := map[string]bool{}
	for _, u := range checkedUsages(t) {
		known[u.line] = true
		text, ok := listed[u.line]
		if !ok {
			t.Errorf("%s %s does not list %s as \"- `%s`\"", referenceFile, referenceSection, u.name, u.line)
		}
		// The variables a command sets are written once, in its table entry; the
		// reference says them.
		for _, e := range u.sets {
			if ok && !strings.Contains(text, "`$"+e.Var+"`") {
				t.Errorf("%s %s: the item of %s does not say that it sets `$%s`", referenceFile, referenceSection, u.name, e.Var)
			}
		}
	}
	for usage := range listed {
		if !known[usage] {
			t.Errorf("%s %s lists \"%s\", which is no command's usage line", referenceFile, referenceSection, usage)
		}
	}
}

// markdownSection returns the text of the "## " section headed title, up to the next
// "## " heading.
func markdownSection(doc, title string) string {
	_, after, ok := strings.Cut(doc, "\n"+title+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(after, "\n## "); i >= 0 {
		after = after[:i]
	}
	return after
}

// checkedUsages returns the usage lines after checking that every command has at least
// one (a command with subcommands, such as webhook, has one for each), that every usage
// line is a command's, and that every usage line starts with its command's name.
func checkedUsages(t *testing.T) []usageLine {
	t.Helper()
	var names, usageNames []string
	for name := range Commands() {
		names = append(names, name)
	}
	seen := map[string]bool{}
	lines := map[string]bool{}
	for _, u := range usages {
		if lines[u.line] {
			t.Errorf("the usage line %q is given twice", u.line)
		}
		lines[u.line] = true
		if !seen[u.name] {
			usageNames = append(usageNames, u.name)
		}
		seen[u.name] = true
		if first, _, _ := strings.Cut(u.line, " "); first != u.name {
			t.Errorf("the usage line of %s starts with %q", u.name, first)
		}
	}
	sort.Strings(names)
	sort.Strings(usageNames)
	if !reflect.DeepEqual(names, usageNames) {
		t.Fatalf("commands %q, usage lines for %q", names, usageNames)
	}
	return usages
}

func TestLookupPath(t *testing.T) {
	body, err := decodeJSON([]byte(`{"data":{"user_id":"u1","n":3},"records":[{"name":"A"}],"detail":[{"loc":["body",2]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"data.user_id":   "u1",
		"data.n":         "3",
		"records.0.name": "A",
		"detail.0.loc":   `["body",2]`,
		"detail.0.loc.1": "2",
		"records":        `[{"name":"A"}]`,
	} {
		v, err := lookupPath(body, path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if got := text(v); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	for _, path := range []string{"data.missing", "records.1", "records.x", "data.user_id.more", ""} {
		if v, err := lookupPath(body, path); err == nil {
			t.Errorf("%s = %v, want an error", path, v)
		}
	}
}

func TestMatchesText(t *testing.T) {
	for _, c := range []struct {
		json, want string
		match      bool
	}{
		{`"abc"`, "abc", true},
		{`"abc"`, `"abc"`, false},
		{`null`, "null", true},
		{`3`, "3", true},
		{`3`, "3.0", false},
		{`10.0`, "10.0", true},
		{`true`, "true", true},
		{`["body","name"]`, `["body","name"]`, true},
		{`["body","name"]`, `[ "body", "name" ]`, true},
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`, true},
		{`{"b":1,"a":2}`, `{"a":2}`, false},
		{`[]`, "[]", true},
	} {
		v, err := decodeJSON([]byte(c.json))
		if err != nil {
			t.Fatal(err)
		}
		if got := matchesText(v, c.want); got != c.match {
			t.Errorf("matchesText(%s, %s) = %v, want %v", c.json, c.want, got, c.match)
		}
	}
}

func TestSettle(t *testing.T) {
	for _, c := range []struct {
		expected, actual string
		same             bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1,"b":2}`, `{"a":1}`, false},
		{`{"a":"<any>"}`, `{"a":{"x":[1]}}`, true},
		{`{"a":"<any>"}`, `{}`, false},
		{`{"created_at":"x","queryGeneratedTime":0}`, `{"created_at":"2026-01-01T00:00:00Z","queryGeneratedTime":123}`, true},
		{`{"created_at":"x"}`, `{}`, false},
		{`{}`, `{"updated_at":"x"}`, false},
		{`{"data":{"updated_at":null}}`, `{"data":{"updated_at":"2026-01-01T00:00:00Z"}}`, true},
		{`[1,"<any>"]`, `[1,2]`, true},
		{`[1,"<any>"]`, `[1]`, false},
		{`[1]`, `[1,2]`, false},
		{`{"n":1}`, `{"n":1.0}`, false},
		{`"<any>"`, `null`, true},
		{`{"id":"<uuid>"}`, `{"id":"7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41"}`, true},
		{`{"id":"<uuid>"}`, `{"id":"7F0C2A4E-1B7D-4C61-9A53-0D8E7F6B5A41"}`, false},
		{`{"id":"<uuid>"}`, `{"id":"7f0c2a4e1b7d4c619a530d8e7f6b5a41"}`, false},
		{`{"id":"<uuid>"}`, `{"id":"x"}`, false},
		{`{"id":"<uuid>"}`, `{"id":3}`, false},
		{`{"id":"<uuid>"}`, `{}`, false},
	} {
		e, err := decodeJSON([]byte(c.expected))
		if err != nil {
			t.Fatal(err)
		}
		a, err := decodeJSON([]byte(c.actual))
		if err != nil {
			t.Fatal(err)
		}
		if got := reflect.DeepEqual(e, settle(e, a)); got != c.same {
			t.Errorf("%s against %s: same = %v, want %v", c.actual, c.expected, got, c.same)
		}
	}
}

func TestShowBody(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{``, "      (empty)"},
		{`{"a":1,"b":[true]}`, "      {\n        \"a\": 1,\n        \"b\": [\n          true\n        ]\n      }"},
		{"not json\nat all\n", "      not json\n      at all"},
	} {
		if got := showBody([]byte(c.body)); got != c.want {
			t.Errorf("showBody(%q) = %q, want %q", c.body, got, c.want)
		}
	}
	long := "[" + strings.Repeat("1,", 99) + "1]"
	got := showBody([]byte(long))
	if n := strings.Count(got, "\n"); n != bodyLines {
		t.Errorf("a 102-line body shows as %d lines, want %d and a note", n+1, bodyLines+1)
	}
	if !strings.HasSuffix(got, "… 62 more lines") {
		t.Errorf("a 102-line body ends %q", got[len(got)-30:])
	}
}

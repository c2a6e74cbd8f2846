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
	var names, usageNames []string
	for name := range Commands() {
		names = append(names, name)
	}
	for name := range usages {
		usageNames = append(usageNames, name)
	}
	sort.Strings(names)
	sort.Strings(usageNames)
	if !reflect.DeepEqual(names, usageNames) {
		t.Fatalf("commands %q, usage lines for %q", names, usageNames)
	}
	for _, name := range names {
		if !strings.Contains(string(doc), "//\t"+usages[name]+"\n") {
			t.Errorf("doc.go does not show the usage line of %s: %s", name, usages[name])
		}
	}
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

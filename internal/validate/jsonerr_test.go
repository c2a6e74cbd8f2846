package validate

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// The offsets and messages below are what Python's json module reports for each text
// (checked with CPython 3.11; the trailing-comma messages are CPython 3.13's).
func TestJSONSyntaxError(t *testing.T) {
	tests := []struct {
		text string
		pos  int
		msg  string
	}{
		{"{\"name\": tru, \"x\":1}", 9, "Expecting value"},
		{"{\"name\": \"Alice", 9, "Unterminated string starting at"},
		{"{\"name\": \"Al\\ice\"}", 12, "Invalid \\escape"},
		{"{\"name\":-}", 8, "Expecting value"},
		{"{\"name\":1.}", 9, "Expecting ',' delimiter"},
		{"{\"a\":1,}", 6, "Illegal trailing comma before end of object"},
		{"[1,2,]", 4, "Illegal trailing comma before end of array"},
		{"{\"\u00e9\": x}", 6, "Expecting value"},
		{"{\"a\" 1}", 5, "Expecting ':' delimiter"},
		{"{a:1}", 1, "Expecting property name enclosed in double quotes"},
		{"{\"a\":1} x", 8, "Extra data"},
		{"  ", 2, "Expecting value"},
		{"{", 1, "Expecting property name enclosed in double quotes"},
		{"[", 1, "Expecting value"},
		{"{\"a\":\"\\u12G4\"}", 7, "Invalid \\uXXXX escape"},
		{"{\"a\":\"\\u12\"}", 7, "Invalid \\uXXXX escape"},
		{"{\"a\":\"x\ty\"}", 7, "Invalid control character at"},
		{"{\"a\":[1 2]}", 8, "Expecting ',' delimiter"},
		{"{\"a\":01}", 6, "Expecting ',' delimiter"},
		{"\"abc", 0, "Unterminated string starting at"},
		{"{\"a\":\"b\"", 8, "Expecting ',' delimiter"},
		{"{\"a\":\"b\",", 9, "Expecting property name enclosed in double quotes"},
		{"tru", 0, "Expecting value"},
		{"[1,,2]", 3, "Expecting value"},
		{"{\"a\":1,,}", 7, "Expecting property name enclosed in double quotes"},
		{"{\"a\":-01}", 7, "Expecting ',' delimiter"},
		{"{\"a\":1e}", 6, "Expecting ',' delimiter"},
		{"{\"a\":.5}", 5, "Expecting value"},
		// Ours, not Python's: NaN and Infinity are not JSON, refused where they start.
		{"NaN", 0, "Expecting value"},
		{"{\"a\": -Infinity}", 6, "Expecting value"},
		{"[1, Infinity]", 4, "Expecting value"},
		// Nesting deeper than 32 fails where level 33 opens, whatever follows it.
		{strings.Repeat("[", 33), 32, nestingMessage},
		{strings.Repeat("[", 65000), 32, nestingMessage},
		{strings.Repeat("[", 33) + strings.Repeat("]", 33), 32, nestingMessage},
		{strings.Repeat("[", 20000) + strings.Repeat("]", 20000), 32, nestingMessage},
		{`{"a":` + strings.Repeat(`{"é":`, 40), 5 + 31*5, nestingMessage},
		{strings.Repeat("[", 10) + "x" + strings.Repeat("[", 40), 10, "Expecting value"},
		{strings.Repeat("[", 32) + "]", 33, "Expecting ',' delimiter"},
	}
	for _, tt := range tests {
		pos, msg, ok := jsonSyntaxError([]byte(tt.text))
		if !ok || pos != tt.pos || msg != tt.msg {
			t.Errorf("jsonSyntaxError(%.40q) = %d, %q, %v; want %d, %q", tt.text, pos, msg, ok, tt.pos, tt.msg)
		}
	}
	deepest := strings.Repeat("[", 32) + strings.Repeat("]", 32)
	for _, valid := range []string{`{"a":[1,2.5e3,-0,"x\u00e9"]}`, ` {"a":null} `, deepest} {
		if pos, msg, ok := jsonSyntaxError([]byte(valid)); ok {
			t.Errorf("jsonSyntaxError(%.40q) = %d, %q; want no fault", valid, pos, msg)
		}
	}
}

// FuzzJSONSyntaxError: the scanner finds a fault exactly when encoding/json refuses the
// text or it nests deeper than the limit, at an offset inside the text, and ParseBody
// never fails on a text both accept.
func FuzzJSONSyntaxError(f *testing.F) {
	for _, s := range []string{`{"name":"Ada"}`, `{"a":[1,2,{"b":null}]}`, `{"a":1,}`, `[1 2]`, `"\ud800"`,
		`{"a":NaN}`, `-Infinity`, strings.Repeat("[", 40), strings.Repeat("[", 32) + strings.Repeat("]", 32), "{\"é\":tru}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fe := func() *FieldError { _, fe := ParseBody(raw); return fe }()
		if !utf8.Valid(raw) {
			if fe == nil || fe.Type != "json_invalid" {
				t.Fatalf("ParseBody(%q) accepted invalid UTF-8", raw)
			}
			return
		}
		pos, msg, ok := jsonSyntaxError(raw)
		if want := !json.Valid(raw) || tooDeep(raw); ok != want {
			t.Fatalf("jsonSyntaxError(%q) = %d, %q, %v; encoding/json valid %v, too deep %v", raw, pos, msg, ok, json.Valid(raw), tooDeep(raw))
		}
		if ok && (pos < 0 || pos > utf8.RuneCount(raw)) {
			t.Fatalf("jsonSyntaxError(%q) = offset %d outside the text", raw, pos)
		}
		if (fe != nil) != ok {
			t.Fatalf("ParseBody(%q) = %+v; scanner fault %v", raw, fe, ok)
		}
	})
}

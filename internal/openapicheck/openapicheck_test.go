package openapicheck

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// doc is a small 3.1 document: one operation whose answer may be null where a 3.1 schema
// allows any value, the case kin-openapi's own response filter refuses.
const doc = `{"openapi":"3.1.0","info":{"title":"t","version":"1"},
"servers":[{"url":"http://127.0.0.1:8080"}],
"paths":{"/things/{id}":{"get":{"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],
"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Thing"},
"example":EXAMPLE}}}}}}},
"components":{"schemas":{"Thing":{"type":"object","properties":{"name":{"type":["string","null"]},"input":{}},
"required":["name","input"],"additionalProperties":false}}}}`

func load(t *testing.T, example string) (*Checker, error) {
	t.Helper()
	return New([]byte(strings.Replace(doc, "EXAMPLE", example, 1)))
}

func TestCheck(t *testing.T) {
	c, err := load(t, `{"name":null,"input":null}`)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	get := httptest.NewRequest("GET", "http://example.com:1234/things/1", nil)
	for body, ok := range map[string]bool{
		`{"name":"a","input":null}`:       true,
		`{"name":null,"input":[1,"x"]}`:   true,
		`{"name":1,"input":null}`:         false,
		`{"name":"a"}`:                    false,
		`{"name":"a","input":1,"more":1}`: false,
		`not json`:                        false,
	} {
		if err := c.Check(get, 200, h, []byte(body)); (err == nil) != ok {
			t.Errorf("%s: %v, want ok %v", body, err, ok)
		}
	}
	if err := c.Check(get, 404, h, []byte(`{}`)); err == nil {
		t.Error("an undocumented status accepted")
	}
	if err := c.Check(get, 200, http.Header{"Content-Type": {"text/plain"}}, []byte(`{"name":"a","input":null}`)); err == nil {
		t.Error("an undocumented media type accepted")
	}
	other := httptest.NewRequest("GET", "http://example.com/elsewhere", nil)
	if err := c.Check(other, 200, h, nil); !errors.Is(err, ErrNoOperation) {
		t.Errorf("unknown path: %v, want ErrNoOperation", err)
	}
}

func TestNewRefuses(t *testing.T) {
	if _, err := load(t, `{"name":2,"input":null}`); err == nil {
		t.Error("an example that does not match its schema loaded")
	}
	if _, err := New([]byte(strings.Replace(strings.Replace(doc, "EXAMPLE", `{"name":null,"input":null}`, 1), `"3.1.0"`, `"3.0.3"`, 1))); err == nil {
		t.Error("an OpenAPI 3.0 document loaded")
	}
}

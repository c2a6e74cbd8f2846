package httpserver

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/openapicheck"
)

var update = flag.Bool("update", false, "rewrite openapi.json and docs/api.md from the code")

// The generated files, from this package's directory.
var (
	openAPIFile = filepath.Join("..", "openapi.json")
	apiDocFile  = filepath.Join("..", "docs", "api.md")
)

type generatedFiles struct {
	ex      *exampleSet
	openAPI []byte
	apiDoc  []byte
}

// The examples run, and the document and the reference are built, once per test binary.
var (
	genOnce sync.Once
	genOut  *generatedFiles
)

func generate(t *testing.T) *generatedFiles {
	t.Helper()
	genOnce.Do(func() {
		ex := runExamples(t)
		doc, err := buildOpenAPI(ex)
		if err != nil {
			t.Fatal(err)
		}
		md, err := buildAPIDoc(doc)
		if err != nil {
			t.Fatal(err)
		}
		genOut = &generatedFiles{ex: ex, openAPI: doc, apiDoc: md}
	})
	if genOut == nil {
		t.Fatal("generating the document failed in an earlier test")
	}
	return genOut
}

// checkGenerated compares a committed generated file with what the code generates now,
// or rewrites it with -update.
func checkGenerated(t *testing.T, file string, want []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil { // #nosec G306 -- a source file of the repository
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go test ./httpserver -run 'TestOpenAPI|TestAPIDoc' -update and commit it\n%s",
			file, firstDifference(got, want))
	}
}

// firstDifference shows the first line where two texts differ.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  committed: " + gl + "\n  generated: " + wl
		}
	}
	return "(they differ in their line endings)"
}

// TestOpenAPI: openapi.json is what the generator makes now, and what the binary embeds.
func TestOpenAPI(t *testing.T) {
	g := generate(t)
	checkGenerated(t, openAPIFile, g.openAPI)
	if !*update && !bytes.Equal(payments.OpenAPI(), g.openAPI) {
		t.Error("payments.OpenAPI() is not the generated document (rebuild after -update)")
	}
}

// TestAPIDoc: docs/api.md is what the generator renders from the document now, and
// covers every route with a request and an answer.
func TestAPIDoc(t *testing.T) {
	g := generate(t)
	checkGenerated(t, apiDocFile, g.apiDoc)
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		if !bytes.Contains(g.apiDoc, []byte("`"+method+" "+path+"`")) {
			t.Errorf("docs/api.md does not describe %s", rt.pattern)
		}
	}
	if n := bytes.Count(g.apiDoc, []byte("Response `200`:")); n != len(routes) {
		t.Errorf("docs/api.md shows %d answers of 200, want %d", n, len(routes))
	}
}

// TestOpenAPIServed: GET /openapi.json answers the committed document, without
// credentials.
func TestOpenAPIServed(t *testing.T) {
	svc := newExampleService(t)
	rec := httptest.NewRecorder()
	New(svc, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	committed, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec.Body.Bytes(), committed) {
		t.Error("GET /openapi.json does not answer the committed openapi.json")
	}
	rec = httptest.NewRecorder()
	New(svc, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/openapi.json", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /openapi.json: %d, want 405", rec.Code)
	}
}

// TestOpenAPIValid: kin-openapi loads the document as OpenAPI 3.1 and validates it, its
// examples against their schemas included; every route of the table is an operation with
// its credentials; and every answer of the example script matches the document.
func TestOpenAPIValid(t *testing.T) {
	g := generate(t)
	c, err := openapicheck.New(g.openAPI)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		item := c.Doc.Paths.Find(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("%s: no operation in the document", rt.pattern)
			continue
		}
		op := item.GetOperation(method)
		want := "platformSignature"
		if rt.auth == userAPI {
			want = "apiSecret"
		}
		if op.Security == nil || len(*op.Security) != 1 || (*op.Security)[0][want] == nil {
			t.Errorf("%s: security %v, want %s", rt.pattern, op.Security, want)
		}
	}
	checked := 0
	for _, e := range g.ex.all {
		if e.pattern == "" {
			continue // the 500, which no request provoked
		}
		r := httptest.NewRequest(e.method, e.target, nil)
		if err := c.Check(r, e.status, e.respHeader, e.respBody); err != nil {
			t.Error(err)
		}
		checked++
	}
	if checked < 40 {
		t.Errorf("only %d answers checked", checked)
	}
}

// TestOpenAPIRejects: the check can fail. Answers a little off what the document says
// (a field removed, a type changed, an extra field, an undocumented status, a null where
// none is allowed) are each refused.
func TestOpenAPIRejects(t *testing.T) {
	g := generate(t)
	c, err := openapicheck.New(g.openAPI)
	if err != nil {
		t.Fatal(err)
	}
	e := g.ex.byRoute["GET /api/platform/users/get/{user_id}"][http.StatusOK]
	list := g.ex.byRoute["POST /api/platform/users/list"][http.StatusOK]
	mutate := func(body []byte, f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	data := func(m map[string]any) map[string]any { return m["data"].(map[string]any) }
	cases := map[string]struct {
		ex     *exchange
		status int
		body   []byte
	}{
		"missing field": {e, 200, mutate(e.respBody, func(m map[string]any) { delete(data(m), "user_id") })},
		"wrong type":    {e, 200, mutate(e.respBody, func(m map[string]any) { data(m)["pw_id"] = "1" })},
		"extra field":   {e, 200, mutate(e.respBody, func(m map[string]any) { data(m)["verified"] = true })},
		"bad format":    {e, 200, mutate(e.respBody, func(m map[string]any) { data(m)["created_at"] = "yesterday" })},
		"null name":     {e, 200, mutate(e.respBody, func(m map[string]any) { data(m)["name"] = nil })},
		"null records":  {list, 200, mutate(list.respBody, func(m map[string]any) { m["records"] = nil })},
		"error as 200":  {e, 200, encodeJSON(404, errorEnvelope("User not found.", exampleTime))},
		"undocumented":  {e, http.StatusTeapot, e.respBody},
		"422 envelope":  {e, 422, encodeJSON(422, errorEnvelope("Invalid.", exampleTime))},
	}
	for name, tc := range cases {
		r := httptest.NewRequest(tc.ex.method, tc.ex.target, nil)
		if err := c.Check(r, tc.status, tc.ex.respHeader, tc.body); err == nil {
			t.Errorf("%s: accepted %d %s", name, tc.status, tc.body)
		}
	}
	// Nullable fields do take null: the check is not refusing everything.
	ok := mutate(e.respBody, func(m map[string]any) { data(m)["email"] = nil })
	if err := c.Check(httptest.NewRequest(e.method, e.target, nil), 200, e.respHeader, ok); err != nil {
		t.Errorf("a null email refused: %v", err)
	}
	// A 429 without its Retry-After is refused.
	th := g.ex.shared[http.StatusTooManyRequests]
	h := th.respHeader.Clone()
	h.Del("Retry-After")
	if err := c.Check(httptest.NewRequest(th.method, th.target, nil), 429, h, th.respBody); err == nil {
		t.Error("a 429 without Retry-After accepted")
	}
}

// newExampleService opens a service on a new database.
func newExampleService(t *testing.T) *payments.Service {
	t.Helper()
	svc, err := payments.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"), payments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

// encodeJSON is the body writeJSON writes, in memory of its own.
func encodeJSON(status int, v any) []byte {
	e := encode(status, v)
	defer e.release()
	return bytes.Clone(e.buf.Bytes())
}

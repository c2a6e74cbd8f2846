package payments_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/openapicheck"
	"github.com/platform-payments/payments/scenario"
)

// TestScripts runs the end-to-end scenarios in testdata/*.txtar against the real
// handler and database (see package scenario for the commands), and checks every answer
// they receive, and every webhook delivery, against openapi.json.
func TestScripts(t *testing.T) {
	testscript.Run(t, checkedParams(t, "testdata"))
}

// TestExamples runs the scenarios the README and docs/scenarios.md show testers, in
// testdata/examples, and checks every answer and delivery against openapi.json.
func TestExamples(t *testing.T) {
	testscript.Run(t, checkedParams(t, "testdata/examples"))
}

// TestScenarioCheckRejects: the check of the scenarios' answers can fail. Against a
// document whose User lacks a property the server writes, the same example scenarios'
// answers are refused (counted here rather than failing the scripts); against one whose
// webhook events lack one, the webhook scenario's deliveries are.
func TestScenarioCheckRejects(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(payments.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	user := doc["components"].(map[string]any)["schemas"].(map[string]any)["User"].(map[string]any)
	delete(user["properties"].(map[string]any), "phone")
	user["required"] = slices.DeleteFunc(user["required"].([]any), func(v any) bool { return v == "phone" })
	mutated, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	// The document's own examples, real answers, are refused first.
	if _, err := openapicheck.New(mutated); err == nil {
		t.Fatal("a document whose examples do not match its schemas loaded")
	}
	dropExamples(doc)
	if mutated, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	tally, err := openapicheck.NewTally(mutated, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("examples", func(t *testing.T) {
		testscript.Run(t, scenario.CheckResponses(scenario.Params("testdata/examples"), tally.Check))
	})
	if _, _, refused := tally.Counts(); refused == 0 {
		t.Error("no answer refused by a document whose User lacks phone")
	}

	// The deliveries of the webhook scenario are refused by a document whose events lack
	// their environment.
	if err := json.Unmarshal(payments.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, entry := range doc["webhooks"].(map[string]any) {
		body := entry.(map[string]any)["post"].(map[string]any)["requestBody"].(map[string]any)
		schema := body["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		delete(schema["properties"].(map[string]any), "environment")
		schema["required"] = slices.DeleteFunc(schema["required"].([]any), func(v any) bool { return v == "environment" })
	}
	dropExamples(doc) // the events' examples are refused too
	if mutated, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if tally, err = openapicheck.NewTally(mutated, true); err != nil {
		t.Fatal(err)
	}
	t.Run("webhooks", func(t *testing.T) {
		p := scenario.Params("")
		p.Files = []string{filepath.Join("testdata", "webhooks_delivery.txtar")}
		testscript.Run(t, scenario.CheckDeliveries(p, tally.CheckDelivery))
	})
	if checked, refused := tally.DeliveryCounts(); checked == 0 || refused != checked {
		t.Errorf("%d of %d deliveries refused by a document whose events lack environment, want all", refused, checked)
	}
}

// dropExamples removes every example member of a document.
func dropExamples(node any) {
	switch n := node.(type) {
	case map[string]any:
		delete(n, "example")
		for _, v := range n {
			dropExamples(v)
		}
	case []any:
		for _, v := range n {
			dropExamples(v)
		}
	}
}

// checkedParams runs the scenarios in dir with every answer, and every webhook delivery
// their receivers get, checked against openapi.json (its paths, and its webhooks
// section), and fails the test when the whole directory ran and no answer was checked,
// or no delivery although a scenario expects one (webhook expect): the check was not
// wired. A filtered run (go test -run 'TestScripts/NAME') may check none: a scenario of
// the command line alone sends no request.
func checkedParams(t *testing.T, dir string) testscript.Params {
	tally, err := openapicheck.NewTally(payments.OpenAPI(), false)
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	expectsDeliveries := false
	for _, file := range scripts {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		expectsDeliveries = expectsDeliveries || regexp.MustCompile(`(?m)^\s*webhook expect `).Match(text)
	}
	var ran atomic.Int64
	p := scenario.CheckResponses(scenario.Params(dir), tally.Check)
	p = scenario.CheckDeliveries(p, tally.CheckDelivery)
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		ran.Add(1)
		if setup != nil {
			return setup(env)
		}
		return nil
	}
	t.Cleanup(func() {
		checked, outside, _ := tally.Counts()
		delivered, _ := tally.DeliveryCounts()
		t.Logf("openapi.json: %d answers checked, %d outside the API's operations, %d webhook deliveries checked, in %d of %d scenarios",
			checked, outside, delivered, ran.Load(), len(scripts))
		all := ran.Load() == int64(len(scripts))
		if checked == 0 && all && !t.Failed() {
			t.Error("no answer was checked against openapi.json")
		}
		if delivered == 0 && expectsDeliveries && all && !t.Failed() {
			t.Error("no webhook delivery was checked against openapi.json, though a scenario expects one (webhook expect)")
		}
	})
	return p
}

// TestDocScenarios runs the example scenarios a tester copies, so that they work: the
// README's (its "A scenario" section) and the first of docs/scenarios.md ("Write a
// scenario").
func TestDocScenarios(t *testing.T) {
	dir := t.TempDir()
	for _, doc := range []struct{ file, section, name string }{
		{"README.md", "## A scenario", "readme_example"},
		{"docs/scenarios.md", "## Write a scenario", "scenarios_example"},
	} {
		raw, err := os.ReadFile(doc.file)
		if err != nil {
			t.Fatal(err)
		}
		_, section, _ := strings.Cut(string(raw), "\n"+doc.section+"\n")
		_, block, _ := strings.Cut(section, "\n```\n")
		script, _, ok := strings.Cut(block, "\n```\n")
		if !ok || !strings.Contains(script, "\n-- ") {
			t.Fatalf("%s: no example scenario (a ``` block with files) in the %q section", doc.file, doc.section)
		}
		if err := os.WriteFile(filepath.Join(dir, doc.name+".txtar"), []byte(script+"\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	scenario.Run(t, dir)
}

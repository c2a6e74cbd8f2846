package payments_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-payments/payments/scenario"
)

// TestScripts runs the end-to-end scenarios in testdata/*.txtar against the real
// handler and database (see package scenario for the commands).
func TestScripts(t *testing.T) {
	scenario.Run(t, "testdata")
}

// TestExamples runs the scenarios the README shows testers, in testdata/examples.
func TestExamples(t *testing.T) {
	scenario.Run(t, "testdata/examples")
}

// TestREADMEScenario runs the example scenario of the README's "Scenario toolkit" section,
// so that what a tester copies from it works.
func TestREADMEScenario(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Scenario toolkit\n")
	_, block, _ := strings.Cut(section, "\n```\n")
	script, _, ok := strings.Cut(block, "\n```\n")
	if !ok || !strings.Contains(script, "\n-- ") {
		t.Fatal("README.md: no example scenario (a ``` block with files) in the Scenario toolkit section")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "readme_example.txtar"), []byte(script+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	scenario.Run(t, dir)
}

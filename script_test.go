package payments_test

import (
	"testing"

	"github.com/platform-payments/payments/scenario"
)

// TestScripts runs the end-to-end scenarios in testdata/*.txtar against the real
// handler and database (see package scenario for the commands).
func TestScripts(t *testing.T) {
	scenario.Run(t, "testdata")
}

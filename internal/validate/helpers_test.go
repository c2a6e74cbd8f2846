package validate

import (
	"os"
	"path/filepath"
	"testing"
)

// testValidator compiles the request schemas, which the payments package embeds.
func testValidator(tb testing.TB) *Validator {
	tb.Helper()
	v, err := New(os.DirFS(filepath.Join("..", "..", "schema")))
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

package payments_test

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
)

// .gitignore keeps out of commits every data key file the program creates by default:
// DefaultKeyFile beside a SQLite database, and in the working directory of a PostgreSQL
// run.
func TestGitignoreCoversDefaultKeyFiles(t *testing.T) {
	raw, err := os.ReadFile(".gitignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	for _, dsn := range []string{
		"payments.db",
		"postgres://payments:secret@localhost:5432/payments?sslmode=disable",
		"postgresql://localhost/ledger",
	} {
		file := filepath.Base(payments.DefaultKeyFile(dsn))
		ignored := false
		for _, p := range patterns {
			if ok, _ := path.Match(strings.TrimPrefix(p, "/"), file); ok {
				ignored = true
			}
		}
		if !ignored {
			t.Errorf("%s, the default key file of %s, is not in .gitignore", file, payments.RedactDSN(dsn))
		}
	}
}

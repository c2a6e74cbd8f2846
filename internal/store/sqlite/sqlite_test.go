package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/platform-payments/payments/internal/store/sqlite"
	"github.com/platform-payments/payments/internal/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Exercise(t, sqlite.Engine{}, func(t testing.TB) string {
		return filepath.Join(t.TempDir(), "store.db")
	})
}

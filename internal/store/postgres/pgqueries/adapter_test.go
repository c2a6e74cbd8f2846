package pgqueries_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/platform-payments/payments/internal/genadapter"
)

// TestAdapterUpToDate fails when adapter.go is not what genadapter writes from the two
// sqlc packages as they are: a query added or changed without go generate ./internal/store/postgres/pgqueries.
func TestAdapterUpToDate(t *testing.T) {
	want, err := genadapter.Generate("../../../../queries", ".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(genadapter.Output)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("pgqueries/%s is stale: run go generate ./internal/store/postgres/pgqueries", genadapter.Output)
	}
}

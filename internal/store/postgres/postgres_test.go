package postgres_test

import (
	"testing"

	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store/postgres"
	"github.com/platform-payments/payments/internal/store/storetest"
)

func TestContract(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("$%s is not set: the contract runs on PostgreSQL when it names a database", pgtest.Env)
	}
	storetest.Exercise(t, postgres.Engine{}, pgtest.DSN)
}

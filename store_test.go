package payments_test

import (
	"context"
	"testing"

	"github.com/platform-payments/payments"
)

// Open takes a DSN to the engine that accepts it: a PostgreSQL URL, or a SQLite file's
// path; what neither takes is refused before anything is made.
func TestEngineOfDSN(t *testing.T) {
	tests := []struct {
		dsn               string
		postgres          bool
		redacted, keyFile string
	}{
		{dsn: "payments.db", redacted: "payments.db", keyFile: "payments.db.key"},
		{dsn: "/var/lib/payments/p.db", redacted: "/var/lib/payments/p.db", keyFile: "/var/lib/payments/p.db.key"},
		{dsn: "postgres://app:s3cret@db.internal:5432/pay?sslmode=disable", postgres: true,
			redacted: "postgres://app:xxxxx@db.internal:5432/pay?sslmode=disable", keyFile: "postgres-pay.key"},
		{dsn: "postgres://app@db.internal/pay?sslmode=disable&password=s3cret", postgres: true,
			redacted: "postgres://app@db.internal/pay?password=xxxxx&sslmode=disable", keyFile: "postgres-pay.key"},
		{dsn: "postgresql://db.internal/", postgres: true, redacted: "postgresql://db.internal/", keyFile: "postgres-payments.key"},
	}
	for _, tt := range tests {
		if got := payments.IsPostgres(tt.dsn); got != tt.postgres {
			t.Errorf("IsPostgres(%q) = %v", tt.dsn, got)
		}
		if got := payments.RedactDSN(tt.dsn); got != tt.redacted {
			t.Errorf("RedactDSN(%q) = %q, want %q", tt.dsn, got, tt.redacted)
		}
		if got := payments.DefaultKeyFile(tt.dsn); got != tt.keyFile {
			t.Errorf("DefaultKeyFile(%q) = %q, want %q", tt.dsn, got, tt.keyFile)
		}
	}
	for _, dsn := range []string{"", "mysql://db.internal/pay"} {
		if got := payments.DefaultKeyFile(dsn); got != "" {
			t.Errorf("DefaultKeyFile(%q) = %q, want none", dsn, got)
		}
		svc, err := payments.Open(context.Background(), dsn, payments.Options{})
		if payments.ErrorCode(err) != payments.CodeInvalid {
			if err == nil {
				svc.Close()
			}
			t.Errorf("Open(%q): %v, want CodeInvalid", dsn, err)
		}
	}
}

package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestUnavailable: each kind of error that means the server cannot be reached for now is
// unavailable, wrapped as the store wraps it; a server's answer of any other kind is not.
func TestUnavailable(t *testing.T) {
	// A real connection refused: a port of 127.0.0.1 nothing listens on (one just closed).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	_, refused := pgconn.Connect(context.Background(), "postgres://payments@"+closed+"/payments?connect_timeout=5&sslmode=disable")
	if refused == nil {
		t.Fatal("connected to a closed port")
	}
	state := func(code string) error { return &pgconn.PgError{Severity: "FATAL", Code: code} }
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"Nil", nil, false},
		{"Other", errors.New("payments: something else"), false},
		{"NoRows", sql.ErrNoRows, false},
		{"UniqueViolation", state("23505"), false},
		{"SerializationFailure", state("40001"), false},
		{"InvalidPassword", state("28P01"), false},
		{"SyntaxError", state("42601"), false},
		{"AdminShutdown", state("57P01"), true},
		{"CrashShutdown", state("57P02"), true},
		{"CannotConnectNow", state("57P03"), true},
		{"TooManyConnections", state("53300"), true},
		{"ConnectionException", state("08000"), true},
		{"ConnectionFailure", state("08006"), true},
		{"ConnectionRefusedByServer", state("08004"), true},
		{"ConnectRefused", refused, true},
		{"ConnectError", &pgconn.ConnectError{}, true},
		{"DialRefused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"ReadReset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"Reset", syscall.ECONNRESET, true},
		{"BrokenPipe", syscall.EPIPE, true},
		{"EOF", io.EOF, true},
		{"UnexpectedEOF", io.ErrUnexpectedEOF, true},
		{"ConnClosed", pgconn.ErrConnClosed, true},
		{"BadConn", driver.ErrBadConn, true},
		{"NetClosed", net.ErrClosed, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := unavailable(tt.err); got != tt.want {
				t.Errorf("unavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
			if tt.err == nil {
				return
			}
			// As the committer hands it to the waiting operations.
			wrapped := fmt.Errorf("payments: commit: %w", tt.err)
			if got := unavailable(wrapped); got != tt.want {
				t.Errorf("unavailable(%v) = %v, want %v", wrapped, got, tt.want)
			}
		})
	}
}

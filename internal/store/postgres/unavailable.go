package postgres

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err means the server cannot be reached for now (see
// unavailable).
func (st *Store) Unavailable(err error) bool { return unavailable(err) }

// unavailableStates are the SQLSTATEs of a server that is going away, coming up or full:
// admin_shutdown (a fast or smart shutdown, or pg_terminate_backend), crash_shutdown,
// cannot_connect_now (starting up, or in recovery), too_many_connections. The whole class
// 08, connection exceptions, is unavailable too.
var unavailableStates = map[string]bool{"57P01": true, "57P02": true, "57P03": true, "53300": true}

// unavailable reports whether err means the server cannot be reached for now: one of
// unavailableStates or of class 08, or no answer at all (a connection that could not be
// made, or was refused, reset or closed under a statement). An error the server answered
// with any other SQLSTATE (a refused password, a constraint) is not: the server is there,
// and the fault is ours.
func unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return unavailableStates[pe.Code] || strings.HasPrefix(pe.Code, "08")
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

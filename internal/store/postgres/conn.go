package postgres

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// batchConn is the connection a batch's transaction runs on. Statements the engine
// queues on it (queue, or any run through ahead) go to the server in front of the next
// statement run on it, in the same round trip: the transaction's BEGIN with its first
// statement, the lock of a user with the insert that needs it, a batch's events and
// idempotency records with its COMMIT. A queued statement's answer is not read by its
// caller: only whether it failed, or what its check says of it.
type batchConn struct {
	conn    *pgx.Conn
	pending []queued
	// plain sends each statement in a round trip of its own (store.Plain.Pipeline): a
	// queued one at once, its error kept for the next statement to return.
	plain  bool
	failed error
}

// sent, for tests, is called with each round trip's statements before they go.
var sent atomic.Pointer[func(statements []string)]

// sending tells the test hook of the statements of a round trip.
func sending(statements ...string) {
	if hook := sent.Load(); hook != nil {
		(*hook)(statements)
	}
}

// queued is a statement waiting to go in front of the next one; read, when set, reads its
// answer (an error fails the statement it went with); else it is only checked for an
// error.
type queued struct {
	sql  string
	args []any
	read func(pgx.BatchResults) error
}

// queue queues a statement to go in front of the next one run on c, its answer read by
// read (nil: checked for an error alone).
func (c *batchConn) queue(sql string, args []any, read func(pgx.BatchResults) error) {
	if !c.plain {
		c.pending = append(c.pending, queued{sql, args, read})
		return
	}
	if c.failed != nil {
		return
	}
	var b pgx.Batch
	b.Queue(sql, args...)
	sending(sql)
	br := c.conn.SendBatch(context.Background(), &b)
	var err error
	if read != nil {
		err = read(br)
	} else {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	c.failed = err
}

// send sends the queued statements and then sql, in one round trip, and returns the
// results with the queued ones read: the caller reads sql's, then closes them.
func (c *batchConn) send(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	var b pgx.Batch
	statements := make([]string, 0, len(c.pending)+1)
	for _, q := range c.pending {
		b.Queue(q.sql, q.args...)
		statements = append(statements, q.sql)
	}
	b.Queue(sql, args...)
	sending(append(statements, sql)...)
	ahead := c.pending
	c.pending = nil
	br := c.conn.SendBatch(ctx, &b)
	var first error
	for _, q := range ahead {
		var err error
		if q.read != nil {
			err = q.read(br)
		} else {
			_, err = br.Exec()
		}
		if first == nil {
			first = err
		}
	}
	if first != nil {
		_ = br.Close()
		return nil, first
	}
	return br, nil
}

// Exec runs sql, with the queued statements in front of it.
func (c *batchConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if c.failed != nil {
		return pgconn.CommandTag{}, c.failed
	}
	if len(c.pending) == 0 {
		sending(sql)
		return c.conn.Exec(ctx, sql, args...)
	}
	br, err := c.send(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query runs sql, with the queued statements in front of it.
func (c *batchConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if c.failed != nil {
		return nil, c.failed
	}
	if len(c.pending) == 0 {
		sending(sql)
		return c.conn.Query(ctx, sql, args...)
	}
	br, err := c.send(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return closingRows{rows, br}, nil
}

// QueryRow runs sql, with the queued statements in front of it.
func (c *batchConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if c.failed != nil {
		return errRow{c.failed}
	}
	if len(c.pending) == 0 {
		sending(sql)
		return c.conn.QueryRow(ctx, sql, args...)
	}
	br, err := c.send(ctx, sql, args)
	if err != nil {
		return errRow{err}
	}
	return closingRow{br.QueryRow(), br}
}

// ahead returns c as a connection on which every statement run is queued in front of the
// next one run on c, its answer unread: for statements whose answer no one reads (Exec's
// tag, a row never scanned). Query, whose rows must be read, is refused.
func (c *batchConn) ahead() aheadConn { return aheadConn{c} }

// aheadConn is batchConn.ahead.
type aheadConn struct{ c *batchConn }

func (a aheadConn) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	a.c.queue(sql, args, nil)
	return pgconn.CommandTag{}, nil
}

func (a aheadConn) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errors.New("payments: a query's rows cannot go unread")
}

func (a aheadConn) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	a.c.queue(sql, args, nil)
	return errRow{nil}
}

// closingRow is a row of a batch's last statement: scanning it closes the batch.
type closingRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r closingRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// closingRows are the rows of a batch's last statement: closing them closes the batch.
type closingRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r closingRows) Close() {
	r.Rows.Close()
	_ = r.br.Close()
}

// errRow is a row whose Scan fails with err (nil: a row scanned into nothing).
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

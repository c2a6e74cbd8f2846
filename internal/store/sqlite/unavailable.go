package sqlite

import (
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Unavailable reports whether err means the file cannot be written or read for now (see
// unavailable).
func (st *Store) Unavailable(err error) bool { return unavailable(err) }

// unavailable reports whether err is SQLite unable to reach the file for now: busy (a
// lock another process held past busy_timeout, 10 s), unable to open it (the file or its
// directory removed or made unreadable, so a new connection fails), an I/O error (the
// disk or the file system failing under it), or the file moved or deleted under an open
// connection (SQLITE_READONLY_DBMOVED). A constraint, a malformed file or any other code
// is not: the file is there, and the fault is ours.
func unavailable(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff { // the primary code of an extended one
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR:
		return true
	}
	return se.Code() == sqlite3.SQLITE_READONLY_DBMOVED
}

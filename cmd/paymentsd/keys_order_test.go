package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

// The key commands in the orders an operator runs them: keys status leaves the database
// as it found it (a SQLite file byte for byte, a PostgreSQL schema table for table), and
// a key is registered only by what writes with it (a server's start, keys rotate), once.

// keyDB is one database under test and how to take its snapshot.
type keyDB struct {
	dsn      string
	snapshot func(t *testing.T) string
}

// sqliteKeyDB is a new SQLite file; its snapshot is the file's bytes (every process that
// opened it has closed it, so the write-ahead log is folded in and gone).
func sqliteKeyDB(t *testing.T) keyDB {
	path := tempDB(t)
	return keyDB{dsn: path, snapshot: func(t *testing.T) string {
		t.Helper()
		if _, err := os.Stat(path + "-wal"); err == nil {
			t.Fatalf("%s-wal is left behind", path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}}
}

// postgresKeyDB is a new PostgreSQL schema; its snapshot is every row of every table.
func postgresKeyDB(t *testing.T) keyDB {
	dsn := pgtest.DSN(t)
	return keyDB{dsn: dsn, snapshot: func(t *testing.T) string {
		t.Helper()
		return dumpPostgres(t, dsn)
	}}
}

// dumpPostgres prints every row of every table of the schema dsn names, in order.
func dumpPostgres(t *testing.T, dsn string) string {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, table := range tables {
		// The row as text, in a stable order: tables without a key are compared whole.
		rows, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT t::text FROM %q t ORDER BY 1`, table)) // #nosec G201 -- the schema's own table names
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "== %s\n", table)
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err != nil {
				t.Fatal(err)
			}
			b.WriteString(row + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// keysReport is what keys status prints.
type keysReport struct {
	SealingKey   string                 `json:"sealing_key"`
	Keys         []payments.DataKeyInfo `json:"keys"`
	Unregistered string                 `json:"unregistered_key"`
}

// keyCase is one order of key commands on one engine.
type keyCase struct {
	t              *testing.T
	db             keyDB
	dir            string
	oldFile, oldID string
	newFile, newID string
	before         string // the snapshot the next step compares with
}

func newKeyCase(t *testing.T, db keyDB) *keyCase {
	dir := t.TempDir()
	c := &keyCase{t: t, db: db, dir: dir}
	c.oldFile, c.oldID = generateKey(t, dir, "old.key")
	if r := runT(t, "", "platform", "create", "-db", db.dsn, "-data-key-file", c.oldFile, "-name", "Acme"); r.code != 0 {
		t.Fatalf("platform create: %+v", r)
	}
	c.before = db.snapshot(t)
	return c
}

// keyFlags are the key flags of the old key alone, the new key with the old one, and the
// new key alone.
func (c *keyCase) keyFlags() (old, both, onlyNew []string) {
	return []string{"-data-key-file", c.oldFile},
		[]string{"-data-key-file", c.newFile, "-old-data-key-file", c.oldFile},
		[]string{"-data-key-file", c.newFile}
}

// run runs paymentsd with args and wants exit status code.
func (c *keyCase) run(code int, args ...string) result {
	c.t.Helper()
	r := runT(c.t, "", args...)
	if r.code != code {
		c.t.Fatalf("%s: exit status %d, want %d: %s%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r
}

// status runs keys status with the key flags and returns what it printed.
func (c *keyCase) status(keyFlags ...string) keysReport {
	c.t.Helper()
	r := c.run(0, append([]string{"keys", "status", "-db", c.db.dsn}, keyFlags...)...)
	var st keysReport
	decodeLine(c.t, r.stdout, &st)
	return st
}

// unchanged fails unless the database is as the last snapshot after what step did.
func (c *keyCase) unchanged(step string) {
	c.t.Helper()
	if now := c.db.snapshot(c.t); now != c.before {
		c.t.Errorf("%s changed the database", step)
		if !strings.HasPrefix(c.db.dsn, "postgres") {
			return
		}
		c.t.Logf("before:\n%s\nafter:\n%s", c.before, now)
	}
}

// changed takes a new snapshot, failing unless step changed the database.
func (c *keyCase) changed(step string) {
	c.t.Helper()
	now := c.db.snapshot(c.t)
	if now == c.before {
		c.t.Errorf("%s left the database as it was", step)
	}
	c.before = now
}

// keyIDs lists the key ids of a report, each with "(retired)" when it is.
func keyIDs(st keysReport) []string {
	var ids []string
	for _, k := range st.Keys {
		id := k.KeyID
		if k.RetiredAt != nil {
			id += " (retired)"
		}
		ids = append(ids, id)
	}
	return ids
}

func (c *keyCase) wantKeys(what string, st keysReport, sealing, unregistered string, ids ...string) {
	c.t.Helper()
	if st.SealingKey != sealing || st.Unregistered != unregistered || !slices.Equal(keyIDs(st), ids) {
		c.t.Errorf("%s: sealing %s, unregistered %q, keys %v; want %s, %q, %v", what, st.SealingKey, st.Unregistered, keyIDs(st), sealing, unregistered, ids)
	}
}

func TestKeyCommandsInEveryOrder(t *testing.T) {
	engines := map[string]func(*testing.T) keyDB{"sqlite": sqliteKeyDB}
	if pgtest.Enabled() {
		engines["postgres"] = postgresKeyDB
	}
	for engine, newDB := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Run("ServersFirst", func(t *testing.T) { keysServersFirst(t, newKeyCase(t, newDB(t))) })
			t.Run("RotateFirst", func(t *testing.T) { keysRotateFirst(t, newKeyCase(t, newDB(t))) })
			t.Run("ErrNoDatabase", func(t *testing.T) { keysStatusNoDatabase(t, newDB(t)) })
		})
	}
	t.Run("sqlite/BackupCopy", keysStatusBackupCopy)
}

// keysStatusBackupCopy: checking a backup's copy with keys status (as docs/deploy.md
// advises) leaves it byte for byte as backup wrote it, in its own journal mode.
func keysStatusBackupCopy(t *testing.T) {
	c := newKeyCase(t, sqliteKeyDB(t))
	copyFile := filepath.Join(c.dir, "copy.db")
	c.run(0, "backup", "-db", c.db.dsn, "-data-key-file", c.oldFile, copyFile)
	before, err := os.ReadFile(copyFile)
	if err != nil {
		t.Fatal(err)
	}
	c.run(0, "keys", "status", "-db", copyFile, "-data-key-file", c.oldFile)
	if after, err := os.ReadFile(copyFile); err != nil || !bytes.Equal(after, before) {
		t.Errorf("keys status changed the backup's copy (%v)", err)
	}
	if _, err := os.Stat(copyFile + "-wal"); err == nil {
		t.Errorf("keys status left %s-wal", copyFile)
	}
}

// keysServersFirst is the order of docs/keys.md: a new key, the servers restarted with it
// first (which registers it), keys rotate, the servers on the new key alone; keys status
// at every step.
func keysServersFirst(t *testing.T, c *keyCase) {
	c.newFile, c.newID = generateKey(t, c.dir, "new.key")
	c.unchanged("keys generate")
	old, both, onlyNew := c.keyFlags()

	c.wantKeys("status", c.status(old...), c.oldID, "", c.oldID)
	c.unchanged("keys status")
	// Before anything registered the new key: status names it and registers nothing, so
	// that the new key alone is still refused as a key of another database.
	c.wantKeys("status, old and new", c.status(both...), c.oldID, c.newID, c.oldID)
	c.unchanged("keys status with the new key and the old")
	if r := c.run(1, append([]string{"keys", "status", "-db", c.db.dsn}, onlyNew...)...); !strings.Contains(r.stderr, "the data key does not match this database") {
		t.Errorf("status, the new key alone, before it is registered: %s", r.stderr)
	}
	c.unchanged("a refused keys status")

	// A server started with the new key first registers it, once.
	_, _, stop := serve(t, append([]string{"-db", c.db.dsn, "-addr", "127.0.0.1:0"}, both...)...)
	if code := stop(); code != 0 {
		t.Fatalf("serve exit status %d", code)
	}
	c.changed("serve with a new key")
	c.wantKeys("status after serve", c.status(both...), c.newID, "", c.oldID, c.newID)
	c.unchanged("keys status")
	_, _, stop = serve(t, append([]string{"-db", c.db.dsn, "-addr", "127.0.0.1:0"}, both...)...)
	if code := stop(); code != 0 {
		t.Fatalf("serve exit status %d", code)
	}
	c.wantKeys("status after serve again", c.status(both...), c.newID, "", c.oldID, c.newID)
	c.before = c.db.snapshot(t)
	// Midway, one key is not enough, and status says so without changing anything.
	if r := c.run(1, append([]string{"keys", "status", "-db", c.db.dsn}, onlyNew...)...); !strings.Contains(r.stderr, "is not finished): give that key too") {
		t.Errorf("status, the new key alone, midway: %s", r.stderr)
	}
	c.unchanged("a refused keys status")

	r := c.run(0, append([]string{"keys", "rotate", "-db", c.db.dsn, "-new-key-file", c.newFile}, old...)...)
	var rot payments.Rotation
	decodeLine(t, r.stdout, &rot)
	if rot.KeyID != c.newID || !slices.Equal(rot.Retired, []string{c.oldID}) {
		t.Errorf("keys rotate: %+v", rot)
	}
	c.changed("keys rotate")
	c.wantKeys("status after the rotation", c.status(onlyNew...), c.newID, "", c.oldID+" (retired)", c.newID)
	c.unchanged("keys status")
	c.wantKeys("status after the rotation, both keys", c.status(both...), c.newID, "", c.oldID+" (retired)", c.newID)
	c.unchanged("keys status with both keys")

	r = c.run(0, append([]string{"keys", "rotate", "-db", c.db.dsn, "-new-key-file", c.newFile}, onlyNew...)...)
	if !strings.Contains(r.stdout, `"resealed":0,"retired":[]`) {
		t.Errorf("keys rotate again: %s", r.stdout)
	}
	c.wantKeys("status after rotating again", c.status(onlyNew...), c.newID, "", c.oldID+" (retired)", c.newID)
	c.before = c.db.snapshot(t)

	_, _, stop = serve(t, append([]string{"-db", c.db.dsn, "-addr", "127.0.0.1:0"}, onlyNew...)...)
	if code := stop(); code != 0 {
		t.Fatalf("serve exit status %d", code)
	}
	c.wantKeys("status after serving on the new key", c.status(onlyNew...), c.newID, "", c.oldID+" (retired)", c.newID)
}

// keysRotateFirst: keys rotate before any server has the new key registers it itself,
// and finishes; status before and after changes nothing.
func keysRotateFirst(t *testing.T, c *keyCase) {
	c.newFile, c.newID = generateKey(t, c.dir, "new.key")
	old, both, onlyNew := c.keyFlags()

	c.wantKeys("status, old and new", c.status(both...), c.oldID, c.newID, c.oldID)
	c.unchanged("keys status with the new key and the old")
	c.wantKeys("status, old and new, again", c.status(both...), c.oldID, c.newID, c.oldID)
	c.unchanged("keys status again")

	c.run(0, append([]string{"keys", "rotate", "-db", c.db.dsn, "-new-key-file", c.newFile}, old...)...)
	c.changed("keys rotate")
	c.wantKeys("status after the rotation", c.status(onlyNew...), c.newID, "", c.oldID+" (retired)", c.newID)
	c.unchanged("keys status")
	// The old key alone is refused now: it is retired.
	c.run(1, append([]string{"keys", "status", "-db", c.db.dsn}, old...)...)
	c.unchanged("a refused keys status")
}

// keysStatusNoDatabase: keys status on a database that does not exist fails, and makes
// neither the database nor a key file.
func keysStatusNoDatabase(t *testing.T, db keyDB) {
	dir := t.TempDir()
	keyFile, _ := generateKey(t, dir, "k.key")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(wd)
	r := runT(t, "", "keys", "status", "-db", db.dsn, "-data-key-file", keyFile)
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "opened to read only") {
		t.Errorf("keys status on no database: %+v", r)
	}
	r = runT(t, "", "keys", "status", "-db", db.dsn)
	if r.code != 1 || r.stdout != "" {
		t.Errorf("keys status on no database, the default key file: %+v", r)
	}
	if strings.HasPrefix(db.dsn, "postgres") {
		if dump := dumpPostgres(t, db.dsn); dump != "" {
			t.Errorf("keys status made tables:\n%s", dump)
		}
	} else if _, err := os.Stat(db.dsn); err == nil {
		t.Errorf("keys status made %s", db.dsn)
	}
	if _, err := os.Stat(payments.DefaultKeyFile(db.dsn)); err == nil {
		t.Errorf("keys status made the key file %s", payments.DefaultKeyFile(db.dsn))
	}
	after, _ := os.ReadDir(wd)
	if len(after) != len(before) {
		t.Errorf("keys status left a file in the working directory")
	}
}

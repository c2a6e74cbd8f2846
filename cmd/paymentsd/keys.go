package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/command"
)

// The database and its data keys: the flags of every command that opens the database, and
// the keys commands.

// Environment variables holding data keys (base64 of 32 bytes), for keys that come from
// a secret store.
const (
	envDataKey     = "PAYMENTS_DATA_KEY"
	envOldDataKeys = "PAYMENTS_OLD_DATA_KEYS" // separated by commas or spaces
)

// getenv and lookupEnv read the environment; tests replace them.
var (
	getenv    = os.Getenv
	lookupEnv = os.LookupEnv
)

// store is the database a command works on and the data keys it was given.
type store struct {
	db          dbFlag // -db, as given
	path        string // the database, once check has resolved it (resolveDB)
	from        string // where path was named when -db did not name it, for the note
	keyFile     string
	oldKeyFiles fileList
}

// defaultDB is the database of a command given neither -db nor $PAYMENTS_DB.
const defaultDB = "payments.db"

// Where a database not named by -db was named (store.from).
const (
	fromEnvDB   = "$" + envDB
	fromDefault = "the default"
)

// dbFlag is -db as the command line gives it. It reads no variable through the command's
// EnvPrefix (serve's): resolveDB reads $PAYMENTS_DB, for every command alike.
type dbFlag struct {
	value string
	given bool
}

func (f *dbFlag) String() string { return f.value }

func (f *dbFlag) Set(s string) error {
	f.value, f.given = s, true
	return nil
}

func (*dbFlag) ReadsOwnEnv() {}

var _ command.OwnEnv = (*dbFlag)(nil)

// resolveDB returns the database of every command that opens one, serve included: -db
// when given, else $PAYMENTS_DB, else defaultDB; and from, where it was named when not by
// -db (fromEnvDB, fromDefault), or "".
func resolveDB(db dbFlag) (path, from string) {
	switch env := getenv(envDB); {
	case db.given:
		return db.value, ""
	case env != "":
		return env, fromEnvDB
	}
	return defaultDB, fromDefault
}

// describeDB names the database dsn for a message: a SQLite file by its path, a
// PostgreSQL database by its host and name (postgres://HOST/NAME), never with the user,
// the password or the parameters.
func describeDB(dsn string) string {
	if !payments.IsPostgres(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return payments.RedactDSN(dsn)
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// dbNote is what a command opening the database says of it when -db did not name it:
// which database, and why that one.
func (st *store) dbNote() string {
	why := "from " + st.from
	if st.from == fromDefault {
		why = fromDefault + ": neither -db nor $" + envDB + " is set"
	}
	return fmt.Sprintf("the database %s (%s)", describeDB(st.path), why)
}

// fileList is a repeatable flag of file names.
type fileList []string

func (l *fileList) String() string { return strings.Join(*l, ",") }

func (l *fileList) Set(s string) error {
	if s == "" {
		return errors.New("want a file name")
	}
	*l = append(*l, s)
	return nil
}

// storeFlags declares -db and the data key flags, taken by every command that opens the
// database; readOnly for a command that only reads it (keys status).
func storeFlags(fs *flag.FlagSet, readOnly bool) *store {
	st := &store{}
	db, key := "created and migrated on first use", ", created with a new key for a new database. "+
		"A key the database does not know yet, given with its current key as an older key, is registered as the key "+
		"new values are sealed under (how a rotation starts; once registered, it is known)"
	if readOnly {
		db, key = "read only: never created, migrated or changed", "; a key the database does not know yet is not registered"
	}
	fs.Var(&st.db, "db", "the database: a SQLite `FILE`, or a PostgreSQL URL (postgres://user:password@host/name); default $"+envDB+
		", else "+defaultDB+" (then named on stderr); "+db)
	fs.StringVar(&st.keyFile, "data-key-file", "", "read the data key (base64 of 32 bytes) from `FILE`; default $"+envDataKey+
		", else the database's file name + .key (postgres-NAME.key in the working directory for PostgreSQL)"+key)
	fs.Var(&st.oldKeyFiles, "old-data-key-file", "also read values sealed under the older data key in `FILE`, "+
		"while a key rotation is under way (repeatable; or $"+envOldDataKeys+")")
	return st
}

// check resolves the database and refuses what can be told wrong before it is opened.
func (st *store) check() error {
	st.path, st.from = resolveDB(st.db)
	if st.path == "" {
		return command.Usagef("-db must not be empty")
	}
	// Set but empty is a mistake, not "no key": PAYMENTS_DATA_KEY=$(cat FILE) with FILE
	// missing would otherwise fall back to the default key file.
	if v, set := lookupEnv(envDataKey); set && strings.TrimSpace(v) == "" {
		return command.Usagef("$%s is set but empty: give the key (base64 of 32 bytes), or unset the variable", envDataKey)
	}
	if st.keyFile != "" && getenv(envDataKey) != "" {
		return command.Usagef("give the data key once: -data-key-file or $%s, not both", envDataKey)
	}
	return nil
}

// keys returns the data keys given, the current one first, or none when the command is
// to use the database's default key file (created with a new key for a new database).
// Older keys given without a current one go with the default key file's key.
func (st *store) keys() ([]payments.DataKey, error) {
	var keys []payments.DataKey
	switch env := getenv(envDataKey); {
	case st.keyFile != "":
		k, err := payments.ReadKeyFile(st.keyFile)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	case env != "":
		k, err := payments.ParseDataKey(env)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", envDataKey, err)
		}
		keys = append(keys, k)
	}
	var older []payments.DataKey
	for _, f := range st.oldKeyFiles {
		k, err := payments.ReadKeyFile(f)
		if err != nil {
			return nil, err
		}
		older = append(older, k)
	}
	for i, text := range strings.FieldsFunc(getenv(envOldDataKeys), func(r rune) bool { return r == ',' || r == ' ' }) {
		k, err := payments.ParseDataKey(text)
		if err != nil {
			return nil, fmt.Errorf("$%s, key %d: %w", envOldDataKeys, i+1, err)
		}
		older = append(older, k)
	}
	if len(keys) == 0 && len(older) > 0 {
		k, err := payments.ReadKeyFile(payments.DefaultKeyFile(st.path))
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return append(keys, older...), nil
}

// withService opens the database of -db with the library's options opts and the data
// keys the flags give, runs fn and closes the database, reporting a failure to close as
// the command's.
func (h *host) withService(ctx context.Context, opts payments.Options, fn func(*payments.Service) error) error {
	keys, err := h.store.keys()
	if err != nil {
		return err
	}
	opts.DataKeys = keys
	return h.openService(ctx, opts, fn)
}

// openService is withService with the data keys of opts.
func (h *host) openService(ctx context.Context, opts payments.Options, fn func(*payments.Service) error) (err error) {
	st := h.store
	if st.from != "" {
		if h.logger != nil {
			h.logger.Info("opening the database", "db", describeDB(st.path), "from", st.from)
		} else {
			fmt.Fprintf(h.stderr, "%s: opening %s\n", program, st.dbNote())
		}
	}
	svc, err := payments.Open(ctx, st.path, opts)
	switch {
	case errors.Is(err, payments.ErrMissingDataKey):
		return fmt.Errorf("%w (the current key: -data-key-file or $%s; older keys: -old-data-key-file or $%s)",
			err, envDataKey, envOldDataKeys)
	case errors.Is(err, payments.ErrWrongDataKey):
		return fmt.Errorf("%w (give the database's key with -data-key-file or $%s)", err, envDataKey)
	case err != nil:
		return err
	}
	defer func() {
		if cerr := svc.Close(); err == nil {
			err = cerr
		}
	}()
	if file := svc.DataKeys().CreatedFile(); file != "" {
		const advice = "back it up with the database; in production give the key from a secret store ($" +
			envDataKey + " or -data-key-file)"
		if h.logger != nil {
			h.logger.Warn("created a new data key file for the new database: "+advice, "key_file", file, "key_id", svc.DataKeys().SealingID())
		} else {
			fmt.Fprintf(h.stderr, "%s: created the data key file %s (key id %s) for the new database: %s\n",
				program, file, svc.DataKeys().SealingID(), advice)
		}
	}
	return fn(svc)
}

var keysRotateCommand = &command.Command{
	Name:    "keys rotate",
	Summary: "Reseal every sealed value under a new data key, in batches, while servers keep serving; then retire the old key.",
	Usage:   "[-data-key-file F] [-old-data-key-file F]... -new-key-file F [-batch 100] [-rate 1000]",
	Details: `The current key comes as for every command (-data-key-file, $PAYMENTS_DATA_KEY or the
default key file). Before rotating, restart every server with the new key first and the
current one as an older key (-data-key-file NEW -old-data-key-file CURRENT): servers then
seal new values under the new key and read values of either. An interrupted rotation
(SIGINT, SIGTERM, a crash) loses nothing: run it again to resume. When it ends, every value
is under the new key and the old key is retired: restart the servers with the new key alone.
The rotation yields to the servers' writes beside it: -batch rows a transaction, each
followed by a pause as long as the transaction held the database, and at most -rate rows a
second (0: as fast as the pauses allow); under writers that keep the database busy it goes
slower than -rate. Prints {"key_id", "resealed", "retired"}; progress (values resealed,
remaining, values a second) goes to stderr every second.`,
	Uses: command.UsesDatabase,
	Run:  runKeysRotate,
}

func runKeysRotate(ctx context.Context, x *command.Invocation, args []string) error {
	fs := x.FlagSet()
	newFile := fs.String("new-key-file", "", "the new data key `FILE` (required; make one with 'paymentsd keys generate'); registered as the database's sealing key when it is not yet")
	batch := fs.Int("batch", 100, "reseal `N` rows per transaction")
	rate := fs.Float64("rate", 1000, "reseal at most `N` rows a second (0: no bound)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	h := hostOf(x)
	db := h.store
	if *newFile == "" {
		return command.Usagef("-new-key-file is required")
	}
	if *batch < 1 {
		return command.Usagef("-batch must be at least 1")
	}
	if *rate < 0 {
		return command.Usagef("-rate must not be negative")
	}
	if err := command.NoArgs(fs); err != nil {
		return err
	}
	newKey, err := payments.ReadKeyFile(*newFile)
	if err != nil {
		return err
	}
	current, err := db.keys()
	if err != nil {
		return err
	}
	if len(current) == 0 { // the default key file, which must exist: a rotation has a key to leave
		k, err := payments.ReadKeyFile(payments.DefaultKeyFile(db.path))
		if err != nil {
			return err
		}
		current = []payments.DataKey{k}
	}
	keys := []payments.DataKey{newKey}
	for _, k := range current {
		if k.ID() != newKey.ID() { // rotating to the current key again only finishes the rotation
			keys = append(keys, k)
		}
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return h.openService(ctx, payments.Options{DataKeys: keys}, func(svc *payments.Service) error {
		// What is left to reseal: every value under a key but the new one.
		keys, err := svc.DataKeys().List(ctx)
		if err != nil {
			return err
		}
		var total int64
		for _, k := range keys {
			if k.KeyID != newKey.ID() {
				total += k.Values
			}
		}
		start := time.Now()
		last := start
		rot, err := svc.DataKeys().Rotate(ctx, payments.RotateOptions{BatchSize: *batch, Rate: *rate, Progress: func(column string, resealed int) {
			if now := time.Now(); now.Sub(last) >= time.Second {
				last = now
				fmt.Fprintf(x.Stderr, "%s keys rotate: %d values resealed, %d remaining, %.0f values/s (at %s)\n", program,
					resealed, max(total-int64(resealed), 0), float64(resealed)/now.Sub(start).Seconds(), column)
			}
		}})
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted after resealing %d values: run the same command again to resume", rot.Resealed)
		}
		if err != nil {
			return err
		}
		return x.PrintJSON(rot)
	})
}

var keysGenerateCommand = &command.Command{
	Name:    "keys generate",
	Summary: "Write a new random data key to a new file, readable by its owner only, and print {\"key_id\", \"key_file\"}.",
	Usage:   "-out FILE",
	Details: "The file holds the key in base64 (as PAYMENTS_DATA_KEY takes it); an existing file is never replaced.",
	Run:     runKeysGenerate,
}

// generatedKey is what keys generate prints: never the key.
type generatedKey struct {
	KeyID   string `json:"key_id"`
	KeyFile string `json:"key_file"`
}

func runKeysGenerate(_ context.Context, x *command.Invocation, args []string) error {
	fs := x.FlagSet()
	out := fs.String("out", "", "write the key to the new `FILE` (required)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return command.Usagef("-out is required")
	}
	if err := command.NoArgs(fs); err != nil {
		return err
	}
	k := payments.NewDataKey()
	if err := payments.WriteKeyFile(*out, k); err != nil {
		return err
	}
	return x.PrintJSON(generatedKey{KeyID: k.ID(), KeyFile: *out})
}

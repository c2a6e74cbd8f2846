// Package payments is the Platform Payments API as a library: users, payees, linked bank
// accounts, cards, cross-border payee banks, addresses, payee rules and exchange rates,
// kept in one SQLite file.
//
// Every operation is a method of *Service taking a context, runs in one transaction and
// returns an *Error whose Code says what went wrong. The HTTP server in httpserver is a
// thin layer over these methods.
package payments

//go:generate env CGO_ENABLED=0 go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1 generate

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/platform-payments/payments/queries"
)

// Environment is the deployment a platform's credentials belong to.
type Environment string

// Environments.
const (
	Sandbox    Environment = "sandbox"
	Production Environment = "production"
)

// ParseEnvironment returns the environment named s.
func ParseEnvironment(s string) (Environment, error) {
	switch e := Environment(s); e {
	case Sandbox, Production:
		return e, nil
	}
	return "", Errorf(CodeInvalid, "unknown environment %q: want sandbox or production", s)
}

// Options configures a Service. The zero value is a sandbox service on the real clock.
type Options struct {
	// Environment is the one environment this service answers for; credentials of the
	// other are refused. Default Sandbox.
	Environment Environment
	// Now returns the current time; default time.Now. Tests inject a fixed clock.
	Now func() time.Time
	// NewID returns a new id; default a time-ordered (version 7) UUID.
	NewID func() uuid.UUID
	// TimestampTolerance is how far X-Timestamp may be from Now, either way, for a
	// platform that requires signed timestamps; whole seconds, at least one. Default
	// DefaultTimestampTolerance.
	TimestampTolerance time.Duration
	// IdempotencyTTL is how long an idempotency key is remembered (see Idempotency);
	// default DefaultIdempotencyTTL, 24 hours.
	IdempotencyTTL time.Duration
	// DataKeys are the keys that full account numbers and platform secrets are sealed under
	// (AES-256-GCM), the newest first: new values are sealed under the first; the others
	// only open values that a key rotation (RotateKeys) has not resealed yet. Empty: the
	// one key in KeyFile. A key that does not match the database fails Open.
	DataKeys []DataKey
	// KeyFile is the file the data key is read from when DataKeys is empty; default
	// DefaultKeyFile(path), the database path with ".key" appended. When it does not exist
	// and the database has no key yet (a new database, or one written before encryption
	// at rest), Open creates it with a new key, readable by its owner only, and
	// CreatedKeyFile names it. Production deployments give DataKeys from a secret store.
	KeyFile string
}

// DefaultTimestampTolerance is the signed-timestamp window of a service whose Options
// leave TimestampTolerance zero: 300 seconds either way of its clock.
const DefaultTimestampTolerance = 300 * time.Second

// Service is an open payments store. It is safe for concurrent use.
type Service struct {
	env   Environment
	now   func() time.Time
	newID func() uuid.UUID
	// window is the signed-timestamp tolerance in whole seconds, either way of now.
	window int64

	// writer is capped at one connection with immediate transactions, so writers queue
	// in the pool instead of failing with SQLITE_BUSY; reader is a query-only pool.
	writer *sql.DB
	reader *sql.DB
	// Statements prepared once per pool (and per connection as it is first used), so a
	// request does not parse its SQL again: parsing costs as much as running a lookup.
	writeQ *queries.Queries
	readQ  *queries.Queries
	// commit runs every write operation, in batches (committer.go).
	commit committer

	schemas *validator

	// keys seal and open stored secrets; index computes the blind index of account
	// numbers. Both are set at Open and never change.
	keys           *keyring
	index          *blindIndex
	createdKeyFile string

	// What authentication has read of platforms and API keys: never changed or deleted
	// once created, so an entry never goes stale.
	platforms *boundedCache[uuid.UUID, platformRecord]
	apiKeys   *boundedCache[uuid.UUID, apiCredential]
	// users holds users as Get User shows them, once read: those fields never change
	// (verified_at does, and is not among them) and users are never deleted.
	users *boundedCache[userKey, User]
	// decoys stand in for unknown credentials, so that they cost what known ones do.
	decoys

	// Idempotency keys: how long they are remembered, the keys whose first call is
	// running, and when expired ones were last purged.
	idempotencyTTL time.Duration
	inflight       inflight
	purgeMu        sync.Mutex
	lastPurge      time.Time

	// countryRules caches each country's compiled payee rules with the rule set they
	// came from; a newer set (loaded by another process, too) replaces them on next use.
	countryRules sync.Map // country code -> countryRules
}

// maxCachedCredentials bounds each credential cache: about 200 bytes an entry.
const maxCachedCredentials = 100_000

// maxCachedUsers bounds the user cache: about 300 bytes an entry.
const maxCachedUsers = 100_000

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Open opens (creating and migrating if needed) the payments store in the SQLite file at
// path.
func Open(ctx context.Context, path string, opts Options) (*Service, error) {
	if path == "" {
		return nil, Errorf(CodeInvalid, "no database path")
	}
	s := &Service{env: opts.Environment, now: opts.Now, newID: opts.NewID, decoys: newDecoys(),
		platforms: newBoundedCache[uuid.UUID, platformRecord](maxCachedCredentials),
		apiKeys:   newBoundedCache[uuid.UUID, apiCredential](maxCachedCredentials),
		commit:    newCommitter(),
		users:     newBoundedCache[userKey, User](maxCachedUsers)}
	if s.env == "" {
		s.env = Sandbox
	}
	if _, err := ParseEnvironment(string(s.env)); err != nil {
		return nil, err
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = newV7
	}
	if s.idempotencyTTL = opts.IdempotencyTTL; s.idempotencyTTL <= 0 {
		s.idempotencyTTL = DefaultIdempotencyTTL
	}
	switch tol := opts.TimestampTolerance; {
	case tol == 0:
		s.window = int64(DefaultTimestampTolerance / time.Second)
	case tol < time.Second || tol%time.Second != 0:
		return nil, Errorf(CodeInvalid, "timestamp tolerance %v: want whole seconds, at least 1s", tol)
	default:
		s.window = int64(tol / time.Second)
	}
	var err error
	if s.schemas, err = newValidator(); err != nil {
		return nil, fmt.Errorf("payments: compile schemas: %w", err)
	}

	// The writer keeps its statement journal in memory (temp_store): a batch's savepoints
	// save each page's old content there, which on disk was a write system call for every
	// page an operation touched first.
	if s.writer, err = sql.Open("sqlite", dsn(path, "_pragma=temp_store(MEMORY)&_txlock=immediate")); err != nil {
		return nil, fmt.Errorf("payments: open %s: %w", path, err)
	}
	s.writer.SetMaxOpenConns(1)
	s.writer.SetMaxIdleConns(1)
	s.writer.SetConnMaxLifetime(0)
	s.writer.SetConnMaxIdleTime(0)
	// From here on a failure closes what was opened: Close skips the handles still nil,
	// and its error joins the one that made Open give up.
	fail := func(err error) (*Service, error) {
		return nil, errors.Join(err, s.Close())
	}
	if err := s.writer.PingContext(ctx); err != nil {
		return fail(fmt.Errorf("payments: open %s: %w", path, err))
	}
	sealed, err := s.migrate(ctx, path, opts)
	var ke keyError
	switch {
	case errors.As(err, &ke):
		return fail(fmt.Errorf("payments: open %s: %w", path, ke.error))
	case err != nil:
		return fail(fmt.Errorf("payments: migrate %s: %w", path, err))
	}
	if sealed {
		// The values just sealed were plain in the write-ahead log's older frames: fold the
		// log into the database and truncate it. (secure_delete has zeroed what the
		// sealing replaced.) Another process reading at this moment keeps the log from
		// being truncated; it is folded in and cleared at the latest when the last
		// connection to the database closes.
		if _, err := s.writer.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return fail(fmt.Errorf("payments: checkpoint %s: %w", path, err))
		}
	}
	s.decoySealed = s.keys.seal([]byte(randomSecret()), s.decoyAAD)
	if s.reader, err = sql.Open("sqlite", dsn(path, "_pragma=query_only(1)")); err != nil {
		return fail(fmt.Errorf("payments: open %s: %w", path, err))
	}
	// Enough readers to keep every core busy; more would only queue inside SQLite.
	readers := max(4, 2*runtime.GOMAXPROCS(0))
	s.reader.SetMaxOpenConns(readers)
	s.reader.SetMaxIdleConns(readers)
	if s.writeQ, err = queries.Prepare(ctx, s.writer); err != nil {
		return fail(fmt.Errorf("payments: prepare: %w", err))
	}
	if s.readQ, err = queries.Prepare(ctx, s.reader); err != nil {
		return fail(fmt.Errorf("payments: prepare: %w", err))
	}
	if err := s.commit.prepare(ctx, s.writer); err != nil {
		return fail(fmt.Errorf("payments: prepare: %w", err))
	}
	s.startCommitter()
	if err := s.loadDefaultRules(ctx); err != nil {
		return fail(fmt.Errorf("payments: load payee rules: %w", err))
	}
	return s, nil
}

// dsn builds the modernc.org/sqlite DSN: pragmas are applied by the driver on every new
// connection of the pool, busy_timeout first so that the others wait for a lock too.
// secure_delete overwrites with zeros what a change removes (a value sealed anew, the
// plain values an older database held), so that no old bytes stay in the file.
func dsn(path, extra string) string {
	u := url.URL{Scheme: "file", Opaque: url.PathEscape(path)}
	return u.String() + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=secure_delete(1)&" + extra
}

// Close closes the store. Writes already taken into a batch finish (and are answered);
// those still waiting, and any later ones, fail.
func (s *Service) Close() error {
	s.stopCommitter()
	errs := []error{s.commit.closeStatements()}
	for _, q := range []*queries.Queries{s.readQ, s.writeQ} {
		if q != nil {
			errs = append(errs, q.Close())
		}
	}
	for _, db := range []*sql.DB{s.reader, s.writer} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}

// migrationSteps are the Go parts of migrations, run in the migration's transaction right
// after its SQL, by the migration's file name without its number (which may change when
// branches merge). Each may use the keyring: set up before it runs.
var migrationSteps = map[string]func(s *Service, ctx context.Context, q *queries.Queries) error{
	"sealed_values.sql": (*Service).sealPlainValues,
}

// migrate applies, in one transaction, the embedded migrations newer than the database's
// user_version (and their Go steps), then sets up the data keys (setUpKeys) in that same
// transaction. It reports whether a step sealed values that were stored plain.
func (s *Service) migrate(ctx context.Context, path string, opts Options) (sealed bool, err error) {
	names, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return false, err
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	q := queries.New(tx)
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return false, err
	}
	if version > len(names) {
		return false, fmt.Errorf("database schema version %d is newer than this program (%d)", version, len(names))
	}
	for i, f := range names {
		if i < version {
			continue
		}
		prefix := fmt.Sprintf("%04d_", i+1)
		if !strings.HasPrefix(f.Name(), prefix) {
			return false, fmt.Errorf("migration %s is out of sequence (want number %04d)", f.Name(), i+1)
		}
		body, err := migrationFiles.ReadFile("migrations/" + f.Name())
		if err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return false, fmt.Errorf("%s: %w", f.Name(), err)
		}
		if step := migrationSteps[strings.TrimPrefix(f.Name(), prefix)]; step != nil {
			if s.keys == nil {
				if err := s.setUpKeys(ctx, q, path, opts); err != nil {
					return false, err
				}
			}
			if err := step(s, ctx, q); err != nil {
				return false, fmt.Errorf("%s: %w", f.Name(), err)
			}
			sealed = version > 0 // a new database had nothing to seal
		}
	}
	if s.keys == nil {
		if err := s.setUpKeys(ctx, q, path, opts); err != nil {
			return false, err
		}
	}
	if version < len(names) {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(names))); err != nil {
			return false, err
		}
	}
	return sealed, tx.Commit()
}

// Reads take one of two forms, by what the operation reads:
//
//   - query, for an operation whose answer comes from one statement, or from statements
//     that cannot disagree because what the first reads never changes (a user's
//     existence and platform: rows are never deleted or moved). A lone statement is its
//     own snapshot in SQLite; wrapping it in BEGIN and COMMIT only costs two round trips
//     through the pool's connection.
//   - read, for an operation whose statements must agree with each other (a total and
//     the page it counts, data keys and the values each seals): one read transaction,
//     one snapshot.

// query runs fn with the reader pool's prepared statements outside any transaction: each
// statement sees the latest committed state on its own.
func (s *Service) query(ctx context.Context, fn func(q *queries.Queries) error) error {
	return fn(s.readQ)
}

// read runs fn in one read transaction on the reader pool, so that an operation reading
// several rows sees one snapshot. (Writes go through write, in committer.go.)
func (s *Service) read(ctx context.Context, fn func(q *queries.Queries) error) error {
	tx, err := s.reader.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("payments: begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(s.readQ.WithTx(tx)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("payments: commit: %w", err)
	}
	return nil
}

// Now returns the service's current time, truncated to the stored precision.
func (s *Service) Now() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}

// Environment returns the environment the service answers for.
func (s *Service) Environment() Environment { return s.env }

// timeLayout is how timestamps are stored: fixed width, so that they sort as text.
const timeLayout = "2006-01-02T15:04:05.000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// parseTime reads a timestamp written by formatTime.
func parseTime(s string) time.Time {
	t, _ := time.Parse(timeLayout, s)
	return t
}

// parseNullTime reads a timestamp of a column that may be NULL.
func parseNullTime(s *string) *time.Time {
	if s == nil {
		return nil
	}
	t := parseTime(*s)
	return &t
}

// notFound maps sql.ErrNoRows to a CodeNotFound error with msg; other errors pass through.
func notFound(err error, msg string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return &Error{Code: CodeNotFound, Message: msg}
	}
	return err
}

// conflicts names, by the UNIQUE constraint the store reports, what a client did twice.
var conflicts = map[string]string{
	"users.platform_id, users.email_key":                                                      "A user with this email already exists.",
	"bank_accounts.user_id, bank_accounts.routing_number, bank_accounts.account_number_index": "This bank account is already linked to the user.",
}

// isUniqueViolation reports whether err is the store refusing a duplicate.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

// storeError maps a UNIQUE constraint failure the client caused to CodeConflict; any
// other error passes through (and becomes internal).
func storeError(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		for constraint, msg := range conflicts {
			if strings.Contains(se.Error(), "UNIQUE constraint failed: "+constraint) {
				return &Error{Code: CodeConflict, Message: msg}
			}
		}
	}
	return err
}

// Decimal is an exact decimal amount or rate, kept as the digits it was given and written
// to JSON as a number with exactly those digits: no float on the way in or out.
type Decimal string

// MarshalJSON writes d as a JSON number.
func (d Decimal) MarshalJSON() ([]byte, error) {
	if d == "" {
		return []byte("0"), nil
	}
	return []byte(d), nil
}

// UnmarshalJSON reads a JSON number, keeping its digits.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil || !json.Valid(b) || b[0] == '"' {
		return fmt.Errorf("payments: decimal must be a JSON number, not %s", b)
	}
	*d = Decimal(n)
	return nil
}

// canonicalID returns the lower-case hyphenated form of a validated UUID, in whichever
// form the client wrote it.
func canonicalID(id string) string { return uuid.MustParse(id).String() }

// platformUser returns a user of the platform; a user of another platform is as absent
// as one that does not exist.
func (s *Service) platformUser(ctx context.Context, q *queries.Queries, platformID uuid.UUID, userID string) (queries.User, error) {
	u, err := q.GetPlatformUser(ctx, queries.GetPlatformUserParams{ID: canonicalID(userID), PlatformID: platformID.String()})
	return u, notFound(err, "User not found.")
}

func jsonUnmarshal(s string, dst any) error { return json.Unmarshal([]byte(s), dst) }

// newV7 returns a time-ordered (version 7) UUID: consecutive rows land next to each other
// in the id indexes instead of on random pages. The time it carries is the created_at
// every response already shows.
func newV7() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil { // only when the system's randomness fails
		return uuid.New()
	}
	return id
}

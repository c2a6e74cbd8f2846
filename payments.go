// Package payments is the Platform Payments API as a library: users, payees, linked bank
// accounts, cards, cross-border payee banks, addresses, payee rules and exchange rates,
// kept in a SQLite file (the embedded default) or a PostgreSQL database that many
// instances share.
//
// Every operation is a method of *Service taking a context, runs in one transaction and
// returns an *Error whose Code says what went wrong. The HTTP server in httpserver is a
// thin layer over these methods; the engines are packages under internal/store, behind
// the contract of package store.
//
// Every operation that changes something writes its event in the same transaction
// (events.go): a platform lists them, and receives them at its webhook endpoints through
// the dispatcher of package dispatch.
//
// What changes a call is written where the call is, as its trailing options: a write runs
// at most once per idempotency key when given one,
// svc.CreateUser(ctx, platformID, in, payments.WithKey(idem)), which reports in idem
// whether its outcome was replayed.
package payments

//go:generate env CGO_ENABLED=0 go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1 generate

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/cache"
	"github.com/platform-payments/payments/internal/credentials"
	"github.com/platform-payments/payments/internal/datakeys"
	"github.com/platform-payments/payments/internal/idem"
	"github.com/platform-payments/payments/internal/outbox"
	"github.com/platform-payments/payments/internal/payeerules"
	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/stored"
	"github.com/platform-payments/payments/internal/validate"
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
	// only open values that a key rotation (DataKeys().Rotate) has not resealed yet.
	// Empty: the one key in KeyFile. A key that does not match the database fails Open.
	DataKeys []DataKey
	// KeyFile is the file the data key is read from when DataKeys is empty; default
	// DefaultKeyFile(path), the database path with ".key" appended. When it does not exist
	// and the database has no key yet (a new database, or one written before encryption
	// at rest), Open creates it with a new key, readable by its owner only, and
	// DataKeys().CreatedFile names it. Production deployments give DataKeys from a
	// secret store.
	KeyFile string
	// MaxConns is the most connections a service on PostgreSQL opens; default
	// DefaultMaxConns(). (SQLite's pools are sized by the engine: one writer, a few
	// readers per core.)
	MaxConns int
	// WebhookAllow lists the address ranges a webhook endpoint may be at although they
	// are not public (loopback, private, link-local, ...): an endpoint URL whose host is
	// an address in another such range is refused. The dispatcher's dialer is given the
	// same list. Empty: public addresses only.
	WebhookAllow []netip.Prefix
	// ReadOnly opens the database to read it only, for a report such as DataKeys().List: Open
	// changes nothing. It creates no database and no key file (a database that does not
	// exist, or whose schema is older than this program's, is refused), loads no payee
	// rules, and registers no data key: a first key of DataKeys the database does not know
	// is left out of the service's keys (DataKeys().Unregistered names it), where Open would
	// otherwise register it as the key new values are sealed under. Writes fail.
	ReadOnly bool

	// plain turns speed devices off, for the benchmarks that measure what each pays
	// (export_test.go).
	plain plainDevices
}

// plainDevices are the devices a benchmark may turn off: the engine's, the user cache.
type plainDevices struct {
	store     store.Plain
	userCache bool
}

// DefaultTimestampTolerance is the signed-timestamp window of a service whose Options
// leave TimestampTolerance zero: 300 seconds either way of its clock.
const DefaultTimestampTolerance = 300 * time.Second

// Service is an open payments store. It is safe for concurrent use.
//
// What changes one call is given with the call, as options (Call): an idempotency key
// (WithKey), a request value validated before (Validated), the request as its client sent
// it (AsSent).
type Service struct {
	env   Environment
	now   func() time.Time
	newID func() uuid.UUID
	// window is the signed-timestamp tolerance in whole seconds, either way of now.
	window int64

	// store is the engine under the service (store.go). The operations reach it only
	// through write, read and query.
	store store.Store

	schemas *validate.Validator

	// keys seal and open stored secrets; index computes the blind index of account
	// numbers. Both are set at Open and never change; dataKeys administers them.
	keys     *seal.Keyring
	index    *seal.BlindIndex
	dataKeys *datakeys.Keys
	// readOnly is Options.ReadOnly.
	readOnly bool

	// What authentication has read of platforms and API keys: never changed or deleted
	// once created, so an entry never goes stale.
	credentials *credentials.Credentials
	// users holds users as Get User shows them, once read: those fields never change
	// (verified_at does, and is not among them) and users are never deleted.
	users *cache.Bounded[userKey, User]
	// plain is Options.plain.
	plain plainDevices

	// idem stores the outcomes of calls made under idempotency keys (Idempotency).
	idem *idem.Records

	// webhookAllow is Options.WebhookAllow.
	webhookAllow []netip.Prefix
	// outbox is the deliveries, as a dispatcher works them (Outbox); a write that added
	// some signals the dispatcher of this process (Outbox().DeliveriesDue).
	outbox *outbox.Outbox

	// countryRules caches each country's compiled payee rules with the rule set they
	// came from; a newer set (loaded by another process, too) replaces them on next use.
	countryRules payeerules.Cache
}

// maxCachedUsers bounds the user cache: about 300 bytes an entry.
const maxCachedUsers = 100_000

// Open opens (creating and migrating if needed) the payments store dsn names: a
// PostgreSQL database for a postgres:// or postgresql:// URL (internal/store/postgres),
// else the SQLite file at that path (internal/store/sqlite); a DSN neither takes is
// CodeInvalid. The operations, their errors and their answers are the same on both.
func Open(ctx context.Context, dsn string, opts Options) (*Service, error) {
	if dsn == "" {
		return nil, Errorf(CodeInvalid, "no database path")
	}
	s := &Service{env: opts.Environment, now: opts.Now, newID: opts.NewID,
		users:        cache.New[userKey, User](maxCachedUsers),
		webhookAllow: opts.WebhookAllow, readOnly: opts.ReadOnly, plain: opts.plain}
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
	s.idem = &idem.Records{TTL: cmp.Or(max(opts.IdempotencyTTL, 0), DefaultIdempotencyTTL),
		NewID: func() string { return s.newID().String() },
		Conflict: func(err error) bool {
			c, ok := s.store.Conflict(err)
			return ok && c == store.IdempotencyKey
		}}
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

	s.outbox = outbox.New(outbox.Config{
		Write: s.writeAlone,
		Query: s.query, Now: s.Now,
		Open:     func(sealed, aad string) ([]byte, error) { return s.keys.Open(sealed, aad) },
		Disabled: s.endpointDisabled,
	})
	engine, err := engineFor(dsn)
	if err != nil {
		return nil, err
	}
	s.store, err = engine.Open(ctx, dsn, store.Config{
		MaxConns:      opts.MaxConns,
		ReadOnly:      opts.ReadOnly,
		DeliveriesDue: s.outbox.MarkDue,
		Plain:         opts.plain.store,
		// The data keys are set up in the migration's transaction, so that two processes
		// opening one new database agree on its first key.
		Setup: func(ctx context.Context, q store.Querier) error { return s.setUpKeys(ctx, q, dsn, opts) },
		Steps: map[string]func(ctx context.Context, q store.Querier) error{
			"sealed_values.sql": func(ctx context.Context, q store.Querier) error { return s.dataKeys.SealPlainValues(ctx, q) },
		},
		Opened: func(ctx context.Context, st store.Store) error {
			s.store = st
			if opts.ReadOnly {
				return nil
			}
			if err := s.loadDefaultRules(ctx); err != nil {
				return fmt.Errorf("payments: load payee rules: %w", err)
			}
			return nil
		},
	})
	if ke := (datakeys.Error{}); errors.As(err, &ke) {
		return nil, fmt.Errorf("payments: open %s: %w", engine.Redact(dsn), ke.Unwrap())
	}
	if err != nil {
		return nil, err
	}
	s.credentials = credentials.New(s.query, s.keys)
	return s, nil
}

// setUpKeys sets up the service's data keys (package datakeys) in Open's migration
// transaction.
func (s *Service) setUpKeys(ctx context.Context, q store.Querier, dsn string, opts Options) error {
	file := opts.KeyFile
	if file == "" && len(opts.DataKeys) == 0 {
		file = DefaultKeyFile(dsn)
	}
	k, err := datakeys.SetUp(ctx, q, datakeys.Config{
		Keys: opts.DataKeys, KeyFile: file, ReadOnly: opts.ReadOnly, Now: s.Now,
		Write: s.writeAlone,
		Read:  s.read, Reads: func() store.Querier { return s.store.Reads() },
		Unavailable: func(err error) bool { return ErrorCode(err) == CodeUnavailable },
	})
	if err != nil {
		return err
	}
	s.keys, s.index, s.dataKeys = k.Ring, k.Index, k
	s.idem.Keys = k.Ring
	return nil
}

// DataKeys returns the administration of the service's data keys: which key seals new
// values, the keys' report, and their rotation.
func (s *Service) DataKeys() *datakeys.Keys { return s.dataKeys }

// Outbox returns the service's webhook deliveries as a dispatcher works them: what
// package dispatch claims, sends and records.
func (s *Service) Outbox() *outbox.Outbox { return s.outbox }

// Close closes the store. Writes already under way finish (and are answered); later
// ones fail.
func (s *Service) Close() error {
	if s.store == nil {
		return nil
	}
	return s.store.Close()
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

// query runs fn with statements outside any transaction: each sees the latest committed
// state on its own.
func (s *Service) query(ctx context.Context, fn func(q store.Querier) error) error {
	return s.unavailable(fn(s.store.Reads()))
}

// read runs fn in one read-only transaction, so that an operation reading several rows
// sees one snapshot.
func (s *Service) read(ctx context.Context, fn func(q store.Querier) error) error {
	return s.unavailable(s.store.Read(ctx, fn))
}

// write runs fn as one write operation: its change is kept whole (fn returned nil) or
// undone whole (fn returned an error or panicked), and is durable when write returns nil.
// fn runs with a context carrying ctx's values but not its cancellation, and may run more
// than once (an engine retries a transaction the database aborted to resolve a conflict),
// so it sets what it captures rather than adding to it. fn must not call write. opts says
// how the store may schedule it beside other writes (the zero value: no lock key).
func (s *Service) write(ctx context.Context, opts store.WriteOptions, fn func(ctx context.Context, q store.Querier) error) error {
	if s.readOnly {
		return errReadOnly
	}
	return s.written(s.store.Write(ctx, opts, fn))
}

// written is what a write returns once the store has run it: a write that made
// deliveries due signals the dispatcher (Outbox), and a database out of reach is
// CodeUnavailable.
func (s *Service) written(err error) error {
	if err == nil {
		s.outbox.Committed()
	}
	return s.unavailable(err)
}

// writeAlone is write scheduled alone, for the outbox and the data keys' administration.
func (s *Service) writeAlone(ctx context.Context, fn func(ctx context.Context, q store.Querier) error) error {
	return s.write(ctx, store.WriteOptions{}, fn)
}

// errReadOnly answers a write of a service opened with Options.ReadOnly.
var errReadOnly = errors.New("payments: the service was opened read-only")

// unavailable maps an error the store reports as the database out of reach (Unavailable)
// to CodeUnavailable, keeping it as the cause; any other error passes through. Every
// read and write passes through it: one place decides what a client may retry.
func (s *Service) unavailable(err error) error {
	if err == nil || ErrorCode(err) != CodeInternal || !s.store.Unavailable(err) {
		return err
	}
	return &Error{Code: CodeUnavailable, Message: msgUnavailable, cause: err}
}

// msgUnavailable is the message of every CodeUnavailable error.
const msgUnavailable = "Service temporarily unavailable: the database cannot be reached. Retry later."

// Now returns the service's current time, truncated to the stored precision.
func (s *Service) Now() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}

// Environment returns the environment the service answers for.
func (s *Service) Environment() Environment { return s.env }

func formatTime(t time.Time) string { return stored.Time(t) }

func parseTime(s string) (time.Time, error) { return stored.ParseTime(s) }

// notFound maps sql.ErrNoRows to a CodeNotFound error with msg; other errors pass through.
func notFound(err error, msg string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return &Error{Code: CodeNotFound, Message: msg}
	}
	return err
}

// conflicts names what a client did twice, by the conflict the store reports.
var conflicts = map[store.Conflict]string{
	store.UserEmail:   "A user with this email already exists.",
	store.BankAccount: "This bank account is already linked to the user.",
}

// storeError maps a duplicate the client caused to CodeConflict; any other error passes
// through (and becomes internal).
func (s *Service) storeError(err error) error {
	if c, ok := s.store.Conflict(err); ok {
		if msg, ok := conflicts[c]; ok {
			return &Error{Code: CodeConflict, Message: msg}
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
func (s *Service) platformUser(ctx context.Context, q store.Querier, platformID uuid.UUID, userID string) (queries.User, error) {
	u, err := q.GetPlatformUser(ctx, queries.GetPlatformUserParams{ID: canonicalID(userID), PlatformID: platformID.String()})
	return u, notFound(err, "User not found.")
}

// owner is what a write needs of the user whose objects it changes: the user's id as
// stored, and name.
type owner struct{ ID, Name string }

// userRead is a user a write read (platformOwner), to be cached once the write has
// committed (remember): before that it may be a user the write's own transaction
// creates, which a failure would undo.
type userRead struct {
	platform uuid.UUID
	row      *queries.User
}

// platformOwner returns the user of the platform as a write needs it: from the user
// cache when the user was read before (a user's platform, id and name never change, and
// users are never deleted: a user found stays found), else read in q, a statement less
// for a write of a user already seen. It returns CodeNotFound when the platform has no
// such user.
func (s *Service) platformOwner(ctx context.Context, q store.Querier, platformID uuid.UUID, userID string, read *userRead) (owner, error) {
	if u, ok := s.users.Get(userKey{platform: platformID, user: uuid.MustParse(userID)}); ok && !s.plain.userCache {
		return owner{ID: u.UserID.String(), Name: u.Name}, nil
	}
	r, err := s.platformUser(ctx, q, platformID, userID)
	if err != nil {
		return owner{}, err
	}
	*read = userRead{platform: platformID, row: &r}
	return owner{ID: r.ID, Name: r.Name}, nil
}

// remember caches the user a write read, once the write has committed.
func (s *Service) remember(read userRead) {
	if read.row == nil {
		return
	}
	u, err := userFromRow(*read.row)
	if err != nil {
		return
	}
	s.users.Put(userKey{platform: read.platform, user: u.UserID}, u)
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

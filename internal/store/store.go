// Package store is the contract between the payments service and a database engine. The
// service talks to the engine through Store and to its statements through Querier (the
// sqlc queries of package queries, which every engine generates in the same shape, plus
// CreateBankAccountTakingDefault, RecordEvent, CreateUserRows and RenameUserPayee); each
// engine, a package under internal/store, keeps its driver, pools, transactions, retries
// and errors to itself and reports what the service must act on as typed values
// (Conflict, Unavailable, ErrClosed). The suite in storetest checks that an
// engine keeps the contract.
package store

import (
	"context"
	"database/sql"
	"errors"
	"math/bits"

	"github.com/platform-payments/payments/queries"
)

// Querier is the statements of one write or read: the generated queries, and the writes
// an engine may run its own way.
type Querier interface {
	queries.Querier
	// CreateBankAccountTakingDefault is CreateBankAccount under the default-account rule.
	// It first holds the user's row until the write ends, so that two writes changing the
	// user's default account run one after the other (an engine whose writes never run
	// side by side, SQLite, holds nothing). The account is the user's default when
	// asked (the default before it, if any, then no longer is: ClearDefaultAccount) or when
	// the user has none (UserHasDefaultAccount, read with the row held), and p.IsDefault
	// is not read. An engine where a statement costs a round trip (PostgreSQL) sends the
	// lock and the insert, which reads whether there is a default itself, together.
	CreateBankAccountTakingDefault(ctx context.Context, p queries.CreateBankAccountParams, asked bool) (queries.BankAccount, error)
	// RecordEvent writes the event and, due at the event's time, a pending delivery of
	// it to each enabled endpoint of its platform subscribed to its type, and returns how
	// many deliveries it wrote: CreateEvent and FanOutEvent. An engine where a statement
	// costs a round trip (PostgreSQL) writes the events of a write's batch together at its
	// end, in its transaction; its RecordEvent returns 0, and the engine calls
	// Config.DeliveriesDue once the batch has committed deliveries.
	RecordEvent(ctx context.Context, e queries.CreateEventParams) (int64, error)
	// CreateUserRows writes a new user of a platform: it raises the platform's user
	// count (CountNewUser, which locks the platform's row until the write ends), and
	// writes the user numbered by it (CreateUser, whose PwID it sets) and the user's
	// wallet and settings, and returns the user as stored. The rows are created at
	// u.User.CreatedAt, or, where instances share the database, at the time of the
	// platform's previous user when that is later: creation times follow pw_id. It
	// returns sql.ErrNoRows, having written nothing, when the platform does not exist. An
	// engine where a statement costs a round trip (PostgreSQL) runs it as one statement.
	// The service creates its users through Store.CreateUser, which lets an engine write
	// the users of one batch together.
	CreateUserRows(ctx context.Context, u NewUserRows) (queries.User, error)
	// RenameUserPayee renames a payee of a user (RenamePayee, whose ID and UserID name
	// it) and returns its name just before, read with the payee's row locked, beside the
	// payee as stored; sql.ErrNoRows, having changed nothing, when the user has no such
	// payee. An engine where a statement costs a round trip (PostgreSQL) runs it as one.
	RenameUserPayee(ctx context.Context, p queries.RenamePayeeParams) (before string, after queries.Payee, err error)
}

// NewUserRows are the rows of a new user (CreateUserRows): the user, its wallet and
// settings (whose user ids and creation times CreateUserRows sets from the user's).
type NewUserRows struct {
	User     queries.CreateUserParams
	Wallet   queries.CreateWalletParams
	Settings queries.CreateUserSettingsParams
}

// Store is an open database.
type Store interface {
	// Write runs fn as one durable, atomic write operation: its change is kept whole (fn
	// returned nil) or undone whole (fn returned an error or panicked, and the panic goes
	// on in the caller), and is durable when Write returns nil. fn runs with a context
	// carrying ctx's values but not its cancellation: once begun, a write is not its
	// caller's to interrupt; a ctx done before it begins drops it (Write returns
	// ctx.Err()). fn may run more than once (an engine runs again a transaction the
	// database aborted to resolve a deadlock or a serialization failure), so it sets
	// what it captures rather than adding to it. fn must not call Write. After Close,
	// Write returns ErrClosed. opts says how the write may be scheduled beside others;
	// the zero WriteOptions, a write that locks nothing others lock first, is always
	// right.
	Write(ctx context.Context, opts WriteOptions, fn func(ctx context.Context, q Querier) error) error
	// CreateUser is a Write that creates a user first: it writes the rows u makes (as
	// Querier.CreateUserRows does), then runs fn with the user as stored, both kept or
	// neither. u is called when the write's turn comes, so that the time it gives the
	// user is read in the order the users are written (and may be again, when the batch
	// is). When the platform does not exist it returns sql.ErrNoRows and fn does not run.
	// An engine where a statement costs a round trip (PostgreSQL) writes the users of one
	// batch's CreateUser operations together, before their fns run: one counter update
	// and one insert for each platform's, as if each had been written in a READ COMMITTED
	// transaction of its own.
	CreateUser(ctx context.Context, opts WriteOptions, u func() NewUserRows, fn func(ctx context.Context, q Querier, user queries.User) error) error
	// Read runs fn in one read-only transaction: one snapshot.
	Read(ctx context.Context, fn func(q Querier) error) error
	// Reads returns statements that run outside any transaction, each on its own
	// snapshot of the latest committed state.
	Reads() Querier
	// Conflict reports whether err is the database refusing a duplicate key, and what
	// was duplicated.
	Conflict(err error) (Conflict, bool)
	// Unavailable reports whether err means the database cannot be reached for now: the
	// connection to it refused, reset or closed, the database shutting down or starting
	// up, or a lock held by another process past the engine's wait. A client may retry
	// the operation later; anything else the engine reports is a fault.
	Unavailable(err error) bool
	// Ping runs a trivial query.
	Ping(ctx context.Context) error
	// Stats reports the engine's pools and commits.
	Stats() Stats
	// Backup writes a consistent copy of the database to a new file at path while the
	// store goes on serving. An engine that leaves backups to the database's own tools
	// returns ErrUnsupported, having touched nothing; a file already at path is an error
	// that wraps fs.ErrExist, and is left as it was.
	Backup(ctx context.Context, path string) error
	// Close waits for the writes under way and closes the connections; later writes
	// fail with ErrClosed. It may be called again.
	Close() error
}

// Conflict is what a write was refused as a duplicate of: the engine names it, whatever
// its database calls the constraint.
type Conflict string

// Conflicts.
const (
	// UserEmail: the platform has a user with this email (its folded form).
	UserEmail Conflict = "user email"
	// BankAccount: the user has this account (routing number and account number) linked.
	BankAccount Conflict = "bank account"
	// IdempotencyKey: an outcome is stored under this scope and key.
	IdempotencyKey Conflict = "idempotency key"
	// Duplicate: any other unique key.
	Duplicate Conflict = "duplicate"
)

// Errors of every engine.
var (
	// ErrClosed answers a write that arrives when the store is closing or closed.
	ErrClosed = errors.New("payments: the store is closed")
	// ErrUnsupported: the engine does not do this (Backup on PostgreSQL).
	ErrUnsupported = errors.New("not supported by this database engine")
)

// Config is what Open needs beside the DSN: the pool size, and the service's parts of
// opening a database, which every engine runs in the transaction that migrates it, so
// that processes opening one new database at once agree on what they make.
type Config struct {
	// MaxConns is the most connections a pooled engine (PostgreSQL) opens; zero, its
	// default. SQLite sizes its own pools.
	MaxConns int
	// ReadOnly: Open changes nothing. It refuses a database that does not exist or whose
	// schema is not this program's (it migrates nothing), and runs Setup in a transaction
	// it rolls back. (Opened still runs: the service writes nothing there then.)
	ReadOnly bool
	// Setup runs once in the migration transaction: before the first of Steps that
	// runs, or after the last migration when none does. The service sets up its data
	// keys here.
	Setup func(ctx context.Context, q Querier) error
	// Steps are the Go parts of migrations, by the migration's file name without its
	// number ("sealed_values.sql"), run in the migration's transaction right after its
	// SQL.
	Steps map[string]func(ctx context.Context, q Querier) error
	// Opened runs once the store is open, before Open returns. On an engine that many
	// processes share (PostgreSQL), each write it makes takes the lock its migrations
	// take, first in the write's transaction, so that processes opening one new database
	// at once make those writes one after the other, each seeing what the one before
	// committed: what must happen once is checked and done in one write. The service
	// loads the shipped payee rules into a database that has none here. When it fails,
	// Open closes the store and fails.
	Opened func(ctx context.Context, st Store) error
	// DeliveriesDue is called after a write whose events made deliveries due commits,
	// before Write returns, when the engine could not say so through RecordEvent.
	DeliveriesDue func()
	// Plain turns speed devices off, for the benchmarks that measure what each pays.
	Plain Plain
}

// Plain turns an engine's speed devices off, each for its plain version, so that a
// benchmark measures what the device pays beside it in one run (docs/architecture.md
// gives the figures). The zero value, every device on, is what the service runs.
type Plain struct {
	// GroupCommit: each write is a transaction of its own (a batch of one).
	GroupCommit bool
	// Gather: SQLite's lone writer never waits a moment for a batch to grow.
	Gather bool
	// Pipeline: PostgreSQL sends every statement in a round trip of its own.
	Pipeline bool
	// BatchedCreates: PostgreSQL writes each create's user in its own operation, not a
	// platform's together.
	BatchedCreates bool
}

// Engine opens the databases of one kind.
type Engine interface {
	// Accepts reports whether dsn names a database of this engine.
	Accepts(dsn string) bool
	// Open opens (creating and migrating if needed) the database dsn names.
	Open(ctx context.Context, dsn string, cfg Config) (Store, error)
	// Redact returns dsn as messages and logs may show it: without a password.
	Redact(dsn string) string
	// DefaultKeyFile is the data key file of the database dsn names when the service is
	// given none.
	DefaultKeyFile(dsn string) string
}

// Stats is what a store has done and holds, for metrics: nothing in it names a platform,
// a user or any stored value.
type Stats struct {
	// Pools are the connection pools' statistics by name: "reader" and "writer" on
	// SQLite, "postgres" on PostgreSQL.
	Pools map[string]sql.DBStats
	// Commits is the number of write transactions committed (on SQLite, by the group
	// commit; on PostgreSQL each carries one operation), and CommittedOps the write
	// operations they carried (the sum of their batch sizes).
	Commits, CommittedOps int64
	// CommitBatches counts committed transactions by their number of operations:
	// CommitBatches[i] those with at most CommitBatchBounds()[i] and more than the bound
	// before (not cumulative).
	CommitBatches []int64
}

// WriteOptions says how a write operation may be scheduled beside others. The zero value
// is a write that locks nothing first that many others lock too.
type WriteOptions struct {
	// LockKey names what the write locks first that many others lock too (a platform's
	// user count, a user's row), or is empty. A group-committing engine that runs batches
	// side by side never runs two writes of one key at once (they go into one batch,
	// which takes the lock once), and puts the writes of one key at most in a batch, so
	// that batches of other keys never wait for it.
	LockKey string
}

// MaxBatch bounds the write operations of one transaction of a group-committing engine,
// so that no caller waits behind an unbounded queue.
const MaxBatch = 128

// BatchBuckets is the number of batch-size buckets: 1, 2, 3-4, … up to MaxBatch.
const BatchBuckets = 8

// CommitBatchBounds returns the upper bounds of the batch-size buckets of Stats: 1, 2,
// 4, … up to MaxBatch. Each call returns a new slice.
func CommitBatchBounds() []int {
	b := make([]int, 0, BatchBuckets)
	for n := 1; n <= MaxBatch; n *= 2 {
		b = append(b, n)
	}
	return b
}

// BatchBucket returns the index in CommitBatchBounds of the bucket of a batch of n
// operations (1 ≤ n ≤ MaxBatch).
func BatchBucket(n int) int { return bits.Len(uint(n - 1)) }

package pgqueries_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/postgres/pgqueries"
	"github.com/platform-payments/payments/queries"
)

// uid returns the id the tests write for name: the ids are uuids (migrations/0006).
func uid(name string) string { return uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)).String() }

// openSchema returns a pool on a fresh schema of the database PAYMENTS_TEST_POSTGRES
// names, with ../migrations/ applied and its connections reading their types
// (RegisterTypes); the schema is dropped at the end.
// The test is skipped when the variable is unset (.ci/pg start DIR prints a DSN).
func openSchema(t *testing.T) *pgxpool.Pool {
	t.Helper()
	dsn := os.Getenv("PAYMENTS_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("PAYMENTS_TEST_POSTGRES is not set: no PostgreSQL to test against")
	}
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "pgqueries_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Error(err)
		}
	})

	sep := " " // a keyword/value DSN
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep = "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
	}
	cfg, err := pgxpool.ParseConfig(dsn + sep + "search_path=" + schema)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		pgqueries.RegisterTypes(conn.TypeMap())
		return nil
	}
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	files, err := filepath.Glob("../migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, f := range files {
		migration, err := os.ReadFile(f) // #nosec G304 -- the package's own migrations
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, string(migration)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return db
}

// generatedQueries returns the text of every query sqlc wrote into this package, by
// name: the string constants of its *.sql.go files that begin with "-- name: ".
func generatedQueries(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.sql.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated files: %v", err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			text, err := strconv.Unquote(lit.Value)
			if err == nil && strings.HasPrefix(text, "-- name: ") {
				out[strings.Fields(text)[2]] = text
			}
			return true
		})
	}
	return out
}

// TestPostgres proves every query parses and plans on PostgreSQL (each is prepared),
// then runs the ones whose behaviour is engine-specific through the Adapter.
func TestPostgres(t *testing.T) {
	db := openSchema(t)
	ctx := context.Background()
	conn, err := db.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	texts := generatedQueries(t)
	if len(texts) < 100 {
		t.Fatalf("%d generated queries found, want them all", len(texts))
	}
	for name, text := range texts {
		if _, err := conn.Conn().Prepare(ctx, "", text); err != nil {
			t.Errorf("prepare %s: %v", name, err)
		}
	}
	conn.Release()
	pq := pgqueries.New(db)
	var q queries.Querier = pgqueries.NewAdapter(pq)

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// uniqueViolation returns the constraint a unique violation names, or fails.
	uniqueViolation := func(err error) string {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" {
			t.Fatalf("got %v, want a unique violation", err)
		}
		return pe.ConstraintName
	}

	// Empty tables: the coalesced maxima.
	if id, err := q.LastPlatformID(ctx); err != nil || id != "" {
		t.Fatalf("LastPlatformID = %q, %v; want empty", id, err)
	}
	if set, err := q.CurrentRuleSet(ctx); err != nil || set != 0 {
		t.Fatalf("CurrentRuleSet = %d, %v; want 0", set, err)
	}

	// A sealed column refuses a plain value, with SQLite's message.
	const keyID = "0123456789abcdef"
	sealed := "v1:" + keyID + ":c2VhbGVk"
	err = q.CreatePlatform(ctx, queries.CreatePlatformParams{ID: uid("p1"), Name: "P", Environment: "sandbox",
		SecretSealed: "plain", CreatedAt: "2026-01-01T00:00:00.000000Z"})
	if err == nil || !strings.Contains(err.Error(), "payments: platforms.secret_sealed: not sealed under a data key in use") {
		t.Fatalf("CreatePlatform with a plain secret: %v", err)
	}
	must(q.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: keyID, KeyCheck: sealed, AddedAt: "2026-01-01T00:00:00.000000Z"}))
	must(q.CreatePlatform(ctx, queries.CreatePlatformParams{ID: uid("p1"), Name: "P", Environment: "sandbox",
		SecretSealed: sealed, CreatedAt: "2026-01-01T00:00:00.000000Z"}))

	// Users: pw_id from the platform's counter; email_key unique per platform.
	email := "a@example.com"
	for i, id := range []string{uid("u1"), uid("u2")} {
		n, err := q.CountNewUser(ctx, uid("p1"))
		must(err)
		if n != 1 {
			t.Fatalf("CountNewUser changed %d rows", n)
		}
		var key *string
		if i == 0 {
			key = &email
		}
		u, err := q.CreateUser(ctx, queries.CreateUserParams{ID: id, PlatformID: uid("p1"), Name: id, EmailKey: key,
			CreatedAt: "2026-01-01T00:00:00.000000Z"})
		must(err)
		if u.PwID != int64(i+1) || u.RowID == 0 || u.Email != nil || (i == 0) != (u.EmailKey != nil) {
			t.Fatalf("CreateUser = %+v", u)
		}
	}
	// A refused create, in its transaction as the service runs it, gives its number back.
	tx, err := db.Begin(ctx)
	must(err)
	txq := pgqueries.Over(tx)
	_, err = txq.CountNewUser(ctx, uid("p1"))
	must(err)
	_, err = txq.CreateUser(ctx, queries.CreateUserParams{ID: uid("u3"), PlatformID: uid("p1"), Name: uid("u3"), EmailKey: &email,
		CreatedAt: "2026-01-01T00:00:00.000000Z"})
	if c := uniqueViolation(err); c != "users_platform_email_key" {
		t.Fatalf("duplicate email_key violates %q", c)
	}
	must(tx.Rollback(ctx))
	if p, err := q.GetPlatform(ctx, uid("p1")); err != nil || p.UserCount != 2 {
		t.Fatalf("after the rollback, GetPlatform = %+v, %v; want user_count 2", p, err)
	}
	page, err := q.ListUsersPage(ctx, queries.ListUsersPageParams{PlatformID: uid("p1"), AfterPwID: 0, PageSize: 10})
	must(err)
	if len(page) != 2 || page[0].ID != uid("u1") || page[1].ID != uid("u2") {
		t.Fatalf("ListUsersPage = %+v", page)
	}
	if id, err := pq.LockUserForUpdate(ctx, uid("u1")); err != nil || id != uid("u1") {
		t.Fatalf("LockUserForUpdate = %q, %v", id, err)
	}
	must(pq.AdvisoryXactLock(ctx, 13))

	// Bank accounts: one default per user; a duplicate number names its constraint.
	account := queries.CreateBankAccountParams{ID: uid("b1"), UserID: uid("u1"), AccountHolderName: "A", BankName: "B",
		AccountNumberSealed: sealed, AccountNumberIndex: []byte{1}, RoutingNumber: "011000015",
		AccountType: "PERSONAL_SAVINGS", IsDefault: 1, CreatedAt: "2026-01-01T00:00:00.000000Z"}
	ba, err := q.CreateBankAccount(ctx, account)
	must(err)
	if ba.Balance != "0" || ba.VerificationStatus != "not_applied" || ba.NickName != nil {
		t.Fatalf("CreateBankAccount = %+v", ba)
	}
	account.ID, account.AccountNumberIndex = uid("b2"), []byte{2}
	_, err = q.CreateBankAccount(ctx, account)
	if c := uniqueViolation(err); c != "bank_accounts_one_default" {
		t.Fatalf("a second default violates %q", c)
	}
	account.IsDefault, account.AccountNumberIndex = 0, []byte{1}
	_, err = q.CreateBankAccount(ctx, account)
	if c := uniqueViolation(err); c != "bank_accounts_user_routing_index_key" {
		t.Fatalf("a duplicate account violates %q", c)
	}
	if has, err := q.UserHasDefaultAccount(ctx, uid("u1")); err != nil || !has {
		t.Fatalf("UserHasDefaultAccount = %v, %v", has, err)
	}
	// The default-account rule, decided by the insert: not asked, beside a default, an
	// account is not the default (whatever IsDefault says); asked, it takes over.
	account.ID, account.AccountNumberIndex, account.IsDefault = uid("b3"), []byte{3}, 1
	if ba, err := pgqueries.NewAdapter(pq).CreateBankAccountTakingDefault(ctx, account, false); err != nil || ba.IsDefault != 0 {
		t.Fatalf("CreateBankAccountTakingDefault, not asked, beside a default = %+v, %v; want not the default", ba, err)
	}
	account.ID, account.AccountNumberIndex, account.IsDefault = uid("b4"), []byte{4}, 0
	if ba, err := pgqueries.NewAdapter(pq).CreateBankAccountTakingDefault(ctx, account, true); err != nil || ba.IsDefault != 1 {
		t.Fatalf("CreateBankAccountTakingDefault, asked = %+v, %v; want the default", ba, err)
	}
	if b1, err := q.GetPlatformBankAccount(ctx, queries.GetPlatformBankAccountParams{ID: uid("b1"), PlatformID: uid("p1")}); err != nil || b1.BankAccount.IsDefault != 0 {
		t.Fatalf("the default before, after one asked to be = %+v, %v; want not the default", b1, err)
	}
	got, err := q.GetPlatformBankAccount(ctx, queries.GetPlatformBankAccountParams{ID: uid("b1"), PlatformID: uid("p1")})
	must(err)
	if got.BankAccount.ID != uid("b1") || got.VerifiedAt != nil {
		t.Fatalf("GetPlatformBankAccount = %+v", got)
	}

	// Walks in id order with an int64 batch; the sealed values counted by key.
	secrets, err := q.PlatformSecretsAfter(ctx, queries.PlatformSecretsAfterParams{After: "", Upto: uid("p1"), Batch: 10})
	must(err)
	if len(secrets) != 1 || secrets[0].ID != uid("p1") {
		t.Fatalf("PlatformSecretsAfter = %+v", secrets)
	}
	counts, err := q.CountSealedByKey(ctx)
	must(err)
	if len(counts) != 1 || counts[0].KeyID != keyID || counts[0].N != 4 { // the platform's secret, 3 accounts' numbers
		t.Fatalf("CountSealedByKey = %+v", counts)
	}
	// An empty list is empty, not nil (emit_empty_slices), as on SQLite.
	addrs, err := q.ListPayeeAddresses(ctx, queries.ListPayeeAddressesParams{UserID: uid("u1")})
	must(err)
	if addrs == nil || len(addrs) != 0 {
		t.Fatalf("ListPayeeAddresses = %#v", addrs)
	}
}

// TestCreateUserRows runs the one-statement create of a user: the platform's counter
// numbers the user, the clock never goes back, the wallet and settings are written with
// it, and a platform that does not exist gets no rows.
func TestCreateUserRows(t *testing.T) {
	db := openSchema(t)
	ctx := context.Background()
	a := pgqueries.NewAdapter(pgqueries.New(db))
	const keyID = "0123456789abcdef"
	sealed := "v1:" + keyID + ":c2VhbGVk"
	if err := a.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: keyID, KeyCheck: sealed, AddedAt: "2026-01-01T00:00:00.000000Z"}); err != nil {
		t.Fatal(err)
	}
	if err := a.CreatePlatform(ctx, queries.CreatePlatformParams{ID: uid("p1"), Name: "P", Environment: "sandbox",
		SecretSealed: sealed, CreatedAt: "2026-01-01T00:00:00.000000Z"}); err != nil {
		t.Fatal(err)
	}
	rows := func(platform, id, at string) store.NewUserRows {
		return store.NewUserRows{
			User:     queries.CreateUserParams{ID: uid(id), PlatformID: platform, Name: "N " + id, CreatedAt: at},
			Wallet:   queries.CreateWalletParams{ID: uid("w-" + id), Currency: "USD"},
			Settings: queries.CreateUserSettingsParams{Currency: "USD", Timezone: "UTC", Language: "en", NotificationsEnabled: 1},
		}
	}
	for _, c := range []struct {
		id, at, wantAt string
		wantPwID       int64
	}{
		{"u1", "2026-01-01T00:00:02.000000Z", "2026-01-01T00:00:02.000000Z", 1},
		// A clock behind the previous user's (another instance's): the previous time.
		{"u2", "2026-01-01T00:00:01.000000Z", "2026-01-01T00:00:02.000000Z", 2},
		{"u3", "2026-01-01T00:00:03.000000Z", "2026-01-01T00:00:03.000000Z", 3},
	} {
		u, err := a.CreateUserRows(ctx, rows(uid("p1"), c.id, c.at))
		if err != nil {
			t.Fatal(err)
		}
		if u.ID != uid(c.id) || u.PwID != c.wantPwID || u.CreatedAt != c.wantAt || u.RowID == 0 || u.Name != "N "+c.id {
			t.Errorf("CreateUserRows(%s) = %+v", c.id, u)
		}
		var walletAt, settingsAt string
		if err := db.QueryRow(ctx, `SELECT w.created_at, s.created_at FROM wallets w
			JOIN user_settings s ON s.user_id = w.user_id WHERE w.user_id = $1`, uid(c.id)).Scan(&walletAt, &settingsAt); err != nil {
			t.Fatal(err)
		}
		if walletAt != c.wantAt || settingsAt != c.wantAt {
			t.Errorf("%s: wallet at %s, settings at %s", c.id, walletAt, settingsAt)
		}
	}
	// Many at once (CreateUsersRows): numbered in their order after u3, each timed no
	// earlier than the clock or the users before it in the array.
	email, phone := "u5@example.com", "2079460000"
	many := []store.NewUserRows{
		rows(uid("p1"), "u4", "2026-01-01T00:00:01.000000Z"), // behind the clock (u3's)
		rows(uid("p1"), "u5", "2026-01-01T00:00:05.000000Z"),
		rows(uid("p1"), "u6", "2026-01-01T00:00:04.000000Z"), // behind u5, before it in the array
		rows(uid("p1"), "u7", "2026-01-01T00:00:06.000000Z"),
	}
	many[1].User.Email, many[1].User.EmailKey, many[1].User.Phone = &email, &email, &phone
	many[3].Wallet.Currency, many[3].Settings.TwoFactorEnabled = "EUR", 1
	got, err := a.CreateUsersRows(ctx, uid("p1"), many)
	if err != nil {
		t.Fatal(err)
	}
	wantAt := []string{"2026-01-01T00:00:03.000000Z", "2026-01-01T00:00:05.000000Z", "2026-01-01T00:00:05.000000Z", "2026-01-01T00:00:06.000000Z"}
	for i, u := range got {
		in := many[i].User
		if u.ID != in.ID || u.PwID != int64(4+i) || u.CreatedAt != wantAt[i] || u.RowID == 0 || u.Name != in.Name ||
			!reflect.DeepEqual(u.Email, in.Email) || !reflect.DeepEqual(u.EmailKey, in.EmailKey) || !reflect.DeepEqual(u.Phone, in.Phone) || u.PlatformID != uid("p1") {
			t.Errorf("CreateUsersRows: user %d = %+v", i, u)
		}
		var walletID, currency, walletAt, settingsAt string
		var twoFactor int64
		if err := db.QueryRow(ctx, `SELECT w.id, w.currency, w.created_at, s.created_at, s.two_factor_enabled FROM wallets w
			JOIN user_settings s ON s.user_id = w.user_id WHERE w.user_id = $1`, in.ID).Scan(&walletID, &currency, &walletAt, &settingsAt, &twoFactor); err != nil {
			t.Fatal(err)
		}
		if walletID != many[i].Wallet.ID || currency != many[i].Wallet.Currency || walletAt != wantAt[i] || settingsAt != wantAt[i] ||
			twoFactor != many[i].Settings.TwoFactorEnabled {
			t.Errorf("%s: wallet %s %s at %s, settings at %s, two-factor %d", in.ID, walletID, currency, walletAt, settingsAt, twoFactor)
		}
	}
	// And the clock is the last of them: one user more, with an earlier time, follows it.
	if u, err := a.CreateUserRows(ctx, rows(uid("p1"), "u8", "2026-01-01T00:00:02.000000Z")); err != nil || u.PwID != 8 || u.CreatedAt != wantAt[3] {
		t.Errorf("CreateUserRows after CreateUsersRows = %+v, %v", u, err)
	}
	// No platform: no rows at all, one at a time or many.
	if _, err := a.CreateUserRows(ctx, rows(uid("p2"), "u9", "2026-01-01T00:00:05.000000Z")); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no platform: %v, want sql.ErrNoRows", err)
	}
	if _, err := a.CreateUsersRows(ctx, uid("p2"), []store.NewUserRows{rows(uid("p2"), "u10", "2026-01-01T00:00:05.000000Z"),
		rows(uid("p2"), "u11", "2026-01-01T00:00:05.000000Z")}); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no platform, many: %v, want sql.ErrNoRows", err)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM users WHERE platform_id = $1) + (SELECT count(*) FROM wallets WHERE id IN ($2, $3, $4))
		+ (SELECT count(*) FROM user_clocks WHERE platform_id = $1)`, uid("p2"), uid("w-u9"), uid("w-u10"), uid("w-u11")).Scan(&n); err != nil || n != 0 {
		t.Errorf("no platform: %d rows written, %v", n, err)
	}
}

// TestRowsFromParents keeps what migrations/0004 relies on, having dropped the foreign keys
// of users (to platforms), wallets and user_settings (to users) and events (to platforms):
// the statements that write these tables are the ones named below, and each writes a row
// only from its parent's, or refuses it. A new statement writing them fails the test until
// it is added here, written the same way.
func TestRowsFromParents(t *testing.T) {
	writers := map[string]bool{}
	for name, text := range generatedQueries(t) {
		for _, table := range []string{"users", "wallets", "user_settings", "events"} {
			if strings.Contains(text, "INSERT INTO "+table+" ") || strings.Contains(text, "UPDATE "+table+" SET user_id") ||
				strings.Contains(text, "UPDATE "+table+" SET platform_id") {
				writers[name] = true
			}
		}
	}
	want := map[string]bool{"CreateUser": true, "CreateWallet": true, "CreateUserSettings": true, "CreateUserRows": true,
		"CreateUsersRows": true, "CreateEvent": true, "EmitEvents": true}
	if !reflect.DeepEqual(writers, want) {
		t.Errorf("the statements writing users, wallets, user_settings and events are %v, want %v", writers, want)
	}

	db := openSchema(t)
	ctx := context.Background()
	a := pgqueries.NewAdapter(pgqueries.New(db))
	at := "2026-01-01T00:00:00.000000Z"
	if _, err := a.CreateUser(ctx, queries.CreateUserParams{ID: uid("u1"), PlatformID: uid("none"), Name: "N", CreatedAt: at}); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("CreateUser without its platform: %v, want sql.ErrNoRows", err)
	}
	if err := a.CreateWallet(ctx, queries.CreateWalletParams{ID: uid("w1"), UserID: uid("none"), Currency: "USD", CreatedAt: at}); err != nil {
		t.Error(err)
	}
	if err := a.CreateUserSettings(ctx, queries.CreateUserSettingsParams{UserID: uid("none"), Currency: "USD", Timezone: "UTC",
		Language: "en", NotificationsEnabled: 1, CreatedAt: at}); err != nil {
		t.Error(err)
	}
	event := queries.CreateEventParams{ID: uid("e1"), PlatformID: uid("none"), Type: "user.created", CreatedAt: at, Payload: "{}"}
	if err := a.CreateEvent(ctx, event); err != nil {
		t.Error(err)
	}
	// A batch's events with one of no platform: refused, and none written.
	const keyID = "0123456789abcdef"
	sealed := "v1:" + keyID + ":c2VhbGVk"
	if err := a.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: keyID, KeyCheck: sealed, AddedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := a.CreatePlatform(ctx, queries.CreatePlatformParams{ID: uid("p1"), Name: "P", Environment: "sandbox",
		SecretSealed: sealed, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	ofP1 := pgqueries.EmittedEvent{ID: uid("e2"), PlatformID: uid("p1"), Type: "user.created", CreatedAt: at, Payload: "{}"}
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The database refuses it (so that a COMMIT behind it in the same round trip commits
	// nothing), as the dropped key did: SQLSTATE 23503.
	var pgErr *pgconn.PgError
	if _, err := pgqueries.NewAdapter(pgqueries.New(tx)).EmitEvents(ctx, []pgqueries.EmittedEvent{ofP1, pgqueries.EmittedEvent(event)}); !errors.As(err, &pgErr) ||
		pgErr.Code != "23503" || pgErr.Message != "payments: an event of no platform" {
		t.Errorf("EmitEvents with an event of no platform: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM users) + (SELECT count(*) FROM wallets) + (SELECT count(*) FROM user_settings)
		+ (SELECT count(*) FROM events)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("without their parents: %d rows written, %v", n, err)
	}
	// And of a platform that exists, written.
	if _, err := a.EmitEvents(ctx, []pgqueries.EmittedEvent{ofP1}); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM events WHERE id = $1 AND platform_id = $2`, uid("e2"), uid("p1")).Scan(&n); err != nil || n != 1 {
		t.Errorf("EmitEvents of p1: %d events written, %v", n, err)
	}
}

package payments_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// What the database file holds: account numbers and platform secrets only sealed, in a new
// database and in one written before encryption at rest.

// leaks returns, for each needle found in a file of dir (the database, its write-ahead
// log, its key file...), "file: needle".
func leaks(t *testing.T, dir string, needles ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				found = append(found, e.Name()+": "+n)
			}
		}
	}
	return found
}

// authenticates checks that a request signed with secret authenticates as the platform.
func authenticates(t *testing.T, svc *payments.Service, platformID uuid.UUID, secret string) {
	t.Helper()
	target := "/api/platform/users/list"
	sig := payments.Sign(secret, "POST", target, []byte("{}"))
	id, err := svc.AuthenticatePlatform(context.Background(), platformID.String(), sig, "POST", target, []byte("{}"))
	if err != nil || id != platformID {
		t.Errorf("platform %s with its secret: %v, %v", platformID, id, err)
	}
}

func TestNoPlainValuesInFiles(t *testing.T) {
	sqliteOnly(t) // looks inside the database's files
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "payments.db")
	svc := mustOpenFile(t, path)
	w := newCBWorldOn(t, svc, path)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	if err := svc.VerifyUser(ctx, u.UserID.String()); err != nil {
		t.Fatal(err)
	}
	const linked, payee = "73915820461937", "7391582046193755"
	a := mustAccount(t, svc, p.PlatformID, newAccount(u.UserID, linked))
	if _, err := svc.AddPayeeBank(ctx, w.platformID, w.userID, payments.NewPayeeBank{
		PayeeID: w.payeeID, AccountNumber: payee, Country: "PH", BankAccType: "savings",
	}); err != nil {
		t.Fatal(err)
	}
	// Reads too: the last four digits come from opening the sealed number.
	if got, err := svc.GetBankAccount(ctx, p.PlatformID, a.AccountID.String()); err != nil || got.AccountNumber != "1937" {
		t.Fatalf("get account: %+v, %v", got, err)
	}
	authenticates(t, svc, p.PlatformID, p.Secret)

	needles := []string{linked, payee, p.Secret}
	if found := leaks(t, dir, needles...); len(found) > 0 {
		t.Errorf("while open: %v", found)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("the write-ahead log was not looked at: %v", err)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if found := leaks(t, dir, needles...); len(found) > 0 {
		t.Errorf("once closed: %v", found)
	}
}

// version2 writes a database as version 2 of the schema left it: full account numbers
// and platform secrets stored plain. It returns the raw connection, still open, so that
// the write-ahead log still holds the plain values when the service opens the file.
type version2 struct {
	db         *sql.DB
	platforms  map[uuid.UUID]string // id -> secret
	users      []uuid.UUID
	accounts   map[string]string // id -> number
	payeeBanks map[string]string
}

func writeVersion2(t *testing.T, path string) *version2 {
	t.Helper()
	var schema []byte
	for _, f := range []string{"internal/store/sqlite/migrations/0001_init.sql", "internal/store/sqlite/migrations/0002_pw_id_per_platform.sql"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		schema = append(append(schema, b...), ";\n"...)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := db.Exec(query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	exec(string(schema) + "PRAGMA user_version = 2;")
	v := &version2{db: db, platforms: map[uuid.UUID]string{}, accounts: map[string]string{}, payeeBanks: map[string]string{}}
	const at = "2026-01-01T00:00:00.000000Z"
	for i := range 3 {
		pid, secret := uuid.New(), fmt.Sprintf("%064x", 0xc0ffee00+i)
		v.platforms[pid] = secret
		exec(`INSERT INTO platforms (id, name, environment, secret, user_count, created_at) VALUES ($1, 'Old', 'sandbox', $2, 1, $3)`,
			pid.String(), secret, at)
		uid, payee := uuid.New(), uuid.New()
		v.users = append(v.users, uid)
		exec(`INSERT INTO users (id, platform_id, pw_id, name, verified_at, created_at) VALUES ($1, $2, 1, 'User', $3, $4)`,
			uid.String(), pid.String(), at, at)
		exec(`INSERT INTO payees (id, user_id, name, created_at) VALUES ($1, $2, 'Payee', $3)`, payee.String(), uid.String(), at)
		for j := range 2 {
			id, number := uuid.NewString(), fmt.Sprintf("48%03d%03d1937", i, j)
			v.accounts[id] = number
			exec(`INSERT INTO bank_accounts (id, user_id, account_holder_name, bank_name, account_number, routing_number,
				account_type, is_default, created_at) VALUES ($1, $2, 'User', 'Chase', $3, '021000021', 'PERSONAL_CHECKING', $4, $5)`,
				id, uid.String(), number, j, at)
			id, number = uuid.NewString(), fmt.Sprintf("59%03d%03d4026", i, j)
			v.payeeBanks[id] = number
			exec(`INSERT INTO payee_banks (id, user_id, payee_id, account_number, country, bank_acc_type, created_at, updated_at)
				VALUES ($1, $2, $3, $4, 'PH', 'savings', $5, $6)`, id, uid.String(), payee.String(), number, at, at)
		}
	}
	return v
}

func (v *version2) needles() []string {
	var out []string
	for _, s := range v.platforms {
		out = append(out, s)
	}
	for _, n := range v.accounts {
		out = append(out, n)
	}
	for _, n := range v.payeeBanks {
		out = append(out, n)
	}
	return out
}

func TestMigrateSealsPlainValues(t *testing.T) {
	sqliteOnly(t) // SQLite's migration 0005, and the files it leaves
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "payments.db")
	v := writeVersion2(t, path)
	if found := leaks(t, dir, v.needles()...); len(found) == 0 {
		t.Fatal("the version 2 database holds no plain value: the test proves nothing")
	}

	svc := mustOpenFile(t, path)
	if svc.DataKeys().CreatedFile() != path+".key" {
		t.Errorf("CreatedKeyFile = %q: an older database gets a key file too", svc.DataKeys().CreatedFile())
	}
	if found := leaks(t, dir, v.needles()...); len(found) > 0 {
		t.Errorf("after the migration: %v", found)
	}

	db := rawDB(t, path)
	t.Run("Sealed", func(t *testing.T) {
		check := func(query, aad func(string) string, want map[string]string) {
			t.Helper()
			rows, err := db.Query(query(""))
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var id, sealed string
				if err := rows.Scan(&id, &sealed); err != nil {
					t.Fatal(err)
				}
				n++
				if got, err := svc.Unseal(sealed, aad(id)); err != nil || got != want[id] {
					t.Errorf("%s: %q opens to %q, %v; want %q", id, sealed, got, err, want[id])
				}
			}
			if n != len(want) {
				t.Errorf("%d rows, want %d", n, len(want))
			}
		}
		secrets := map[string]string{}
		for id, s := range v.platforms {
			secrets[id.String()] = s
		}
		check(func(string) string { return "SELECT id, secret_sealed FROM platforms" }, payments.PlatformSecretAAD, secrets)
		check(func(string) string { return "SELECT id, account_number_sealed FROM bank_accounts" }, payments.BankAccountNumberAAD, v.accounts)
		check(func(string) string { return "SELECT id, account_number_sealed FROM payee_banks" }, payments.PayeeBankNumberAAD, v.payeeBanks)
	})
	t.Run("Indexed", func(t *testing.T) {
		for id, number := range v.accounts {
			var user, routing string
			var index []byte
			if err := db.QueryRow(`SELECT user_id, routing_number, account_number_index FROM bank_accounts WHERE id = $1`, id).
				Scan(&user, &routing, &index); err != nil {
				t.Fatal(err)
			}
			if want := svc.AccountIndex(user, routing, number); !bytes.Equal(index, want) {
				t.Errorf("account %s: index %x, want %x", id, index, want)
			}
		}
	})
	t.Run("Served", func(t *testing.T) {
		for id, secret := range v.platforms {
			authenticates(t, svc, id, secret)
		}
		for i, uid := range v.users {
			var pid uuid.UUID
			for p := range v.platforms {
				if queryInt(t, db, `SELECT count(*) FROM users WHERE id = $1 AND platform_id = $2`, uid.String(), p.String()) == 1 {
					pid = p
				}
			}
			var accountID string
			if err := db.QueryRow(`SELECT id FROM bank_accounts WHERE user_id = $1 ORDER BY id LIMIT 1`, uid.String()).Scan(&accountID); err != nil {
				t.Fatal(err)
			}
			got, err := svc.GetBankAccount(ctx, pid, accountID)
			if err != nil || got.AccountNumber != "1937" {
				t.Errorf("user %d: account %+v, %v; want last four 1937", i, got, err)
			}
			// The same number again is still a duplicate; another is not.
			in := newAccount(uid, v.accounts[accountID])
			if _, err := svc.AddBankAccount(ctx, pid, in); payments.ErrorCode(err) != payments.CodeConflict {
				t.Errorf("user %d: a migrated account linked again: %v, want a conflict", i, err)
			}
			mustAccount(t, svc, pid, newAccount(uid, "99"+v.accounts[accountID]))
		}
	})
	t.Run("Closed", func(t *testing.T) {
		if err := svc.Close(); err != nil {
			t.Fatal(err)
		}
		if err := v.db.Close(); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if found := leaks(t, dir, v.needles()...); len(found) > 0 {
			t.Errorf("once closed: %v", found)
		}
	})
}

// The database itself refuses a plain value, or one sealed under a key it does not know,
// in a sealed column: whatever writes to the file, not only this package.
func TestSealedColumnsRefusePlainValues(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	svc := mustOpenFile(t, path)
	w := newCBWorldOn(t, svc, path)
	a := mustAccount(t, svc, w.platformID, newAccount(uuid.MustParse(w.userID), "123456789"))
	bank, err := svc.AddPayeeBank(ctx, w.platformID, w.userID, payments.NewPayeeBank{
		PayeeID: w.payeeID, AccountNumber: "1234567890123456", Country: "PH", BankAccType: "savings"})
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	var sealed string
	if err := db.QueryRow(`SELECT secret_sealed FROM platforms WHERE id = $1`, w.platformID.String()).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	unknownKey := "v1:0123456789abcdef" + sealed[19:]
	for _, tc := range []struct{ table, column, id string }{
		{"platforms", "secret_sealed", w.platformID.String()},
		{"bank_accounts", "account_number_sealed", a.AccountID.String()},
		{"payee_banks", "account_number_sealed", bank.BankID.String()},
		{"blind_index_key", "key_sealed", "1"},
	} {
		for name, value := range map[string]string{"Plain": "123456789", "UnknownKey": unknownKey} {
			t.Run(tc.table+"/"+name, func(t *testing.T) {
				_, err := db.Exec(fmt.Sprintf(`UPDATE %s SET %s = $1 WHERE id = $2`, tc.table, tc.column), value, tc.id)
				if err == nil || !strings.Contains(err.Error(), "not sealed under a data key in use") {
					t.Errorf("update: %v", err)
				}
			})
		}
	}
	if _, err := db.Exec(`INSERT INTO platforms (id, name, environment, secret_sealed, created_at)
		VALUES ($1, 'Plain', 'sandbox', 'secret', '2026-01-01T00:00:00.000000Z')`, uuid.NewString()); err == nil {
		t.Error("insert of a plain secret: no error")
	}
}

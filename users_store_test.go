package payments_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Users in the store: concurrent creates, reopening, and the pw_id migration.

func TestCreateUser_Concurrent(t *testing.T) {
	const workers, each = 16, 25
	path := newDSN(t)
	svc := mustOpenFile(t, path)
	p := mustPlatform(t, svc)

	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				email := fmt.Sprintf("w%d-u%d@example.com", w, i)
				if _, err := svc.CreateUser(context.Background(), p.PlatformID, payments.NewUser{Name: "User", Email: &email}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	all := listAll(t, svc, p.PlatformID)
	if len(all) != workers*each {
		t.Fatalf("%d users listed, want %d", len(all), workers*each)
	}
	seen := map[uuid.UUID]bool{}
	inversions, firstInversion := 0, ""
	for i, u := range all {
		if seen[u.UserID] {
			t.Errorf("user %s listed twice", u.UserID)
		}
		seen[u.UserID] = true
		if i > 0 && u.PwID <= all[i-1].PwID {
			t.Errorf("record %d: pw_id %d after %d", i, u.PwID, all[i-1].PwID)
		}
		// Oldest first: the order of the list is the order of the created_at it shows.
		if i > 0 && u.CreatedAt.Before(all[i-1].CreatedAt) {
			if inversions == 0 {
				firstInversion = fmt.Sprintf("record %d created at %s follows record %d created at %s",
					i, u.CreatedAt.Format(time.RFC3339Nano), i-1, all[i-1].CreatedAt.Format(time.RFC3339Nano))
			}
			inversions++
		}
	}
	if inversions > 0 {
		t.Errorf("List Users is not oldest first by created_at: %d of %d records are older than the one before (%s)",
			inversions, len(all), firstInversion)
	}

	db := rawDB(t, path)
	var n, lo, hi, distinct, userCount int64
	if err := db.QueryRow(`SELECT count(*), min(pw_id), max(pw_id), count(DISTINCT pw_id),
		(SELECT user_count FROM platforms WHERE id = $1) FROM users WHERE platform_id = $2`,
		p.PlatformID.String(), p.PlatformID.String()).Scan(&n, &lo, &hi, &distinct, &userCount); err != nil {
		t.Fatal(err)
	}
	if n != workers*each || lo != 1 || hi != n || distinct != n || userCount != n {
		t.Errorf("users %d, pw_id %d..%d (%d distinct), user_count %d: want dense 1..%d", n, lo, hi, distinct, userCount, workers*each)
	}
	for _, table := range []string{"wallets", "user_settings"} {
		if got := queryInt(t, db, `SELECT count(*) FROM `+table); got != n {
			t.Errorf("%d rows in %s, want %d", got, table, n)
		}
	}
}

func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	first := mustOpenFile(t, path)
	p := mustPlatform(t, first)
	u := mustUser(t, first, p.PlatformID, "Ada", "ada@example.com")
	key, err := first.CreateAPIKey(ctx, u.UserID.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := first.VerifyUser(ctx, u.UserID.String()); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	svc := mustOpenFile(t, path)
	got, err := svc.GetUser(ctx, p.PlatformID, u.UserID.String())
	if err != nil {
		t.Fatal(err)
	}
	if canonicalJSON(t, got) != canonicalJSON(t, u) {
		t.Errorf("after reopening: %+v, want %+v", got, u)
	}
	if _, err := svc.AuthenticatePlatform(ctx, p.PlatformID.String(), payments.Sign(p.Secret, "GET", "/", nil), "GET", "/", nil); err != nil {
		t.Errorf("platform secret lost: %v", err)
	}
	if c, err := svc.AuthenticateAPIKey(ctx, key.APIKey.String(), key.APISecret); err != nil || c.UserID != u.UserID {
		t.Errorf("API key lost: %+v, %v", c, err)
	}
	if has, err := svc.HasPlatforms(ctx); err != nil || !has {
		t.Errorf("HasPlatforms = %v, %v", has, err)
	}
	if _, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ADA@example.com")}); payments.ErrorCode(err) != payments.CodeConflict {
		t.Errorf("duplicate after reopening: %v, want a conflict", err)
	}
	next := mustUser(t, svc, p.PlatformID, "Bob", "bob@example.com")
	if next.PwID <= u.PwID {
		t.Errorf("pw_id %d after %d", next.PwID, u.PwID)
	}
	page, err := svc.ListUsers(ctx, p.PlatformID, payments.ListUsersParams{})
	if err != nil {
		t.Fatal(err)
	}
	if names(page.Records) != "Ada,Bob" || page.TotalRecords != 2 {
		t.Errorf("after reopening: %s (total %d)", names(page.Records), page.TotalRecords)
	}
}

// A database made before migration 0002 numbered users with one counter over all
// platforms; opening it renumbers them per platform, in each platform's creation order.
func TestMigratePwIDPerPlatform(t *testing.T) {
	sqliteOnly(t) // SQLite's migration 0002; PostgreSQL starts at the schema it leaves
	ctx := context.Background()
	path := newDSN(t)
	schema, err := os.ReadFile("internal/store/sqlite/migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	if _, err := db.Exec(string(schema) + `; PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	platforms := []string{uuid.NewString(), uuid.NewString()}
	for _, p := range platforms {
		if _, err := db.Exec(`INSERT INTO platforms (id, name, environment, secret, user_count, created_at)
			VALUES ($1, 'Old', 'sandbox', 'secret', 3, '2026-01-01T00:00:00.000000Z')`, p); err != nil {
			t.Fatal(err)
		}
	}
	users := make([]string, 6)
	for i := range users { // as version 1 wrote them: pw_id 1..6 across both platforms
		users[i] = uuid.NewString()
		if _, err := db.Exec(`INSERT INTO users (pw_id, id, platform_id, seq, name, created_at)
			VALUES ($1, $2, $3, $4, 'User', $5)`, i+1, users[i], platforms[i%2], i/2+1,
			fmt.Sprintf("2026-01-01T00:00:0%d.000000Z", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	svc := mustOpenFile(t, path)
	for i, id := range users {
		u, err := svc.GetUser(ctx, uuid.MustParse(platforms[i%2]), id)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(i/2 + 1); u.PwID != want {
			t.Errorf("user %d: pw_id %d after the migration, want %d", i, u.PwID, want)
		}
	}
	for _, p := range platforms {
		page, err := svc.ListUsers(ctx, uuid.MustParse(p), payments.ListUsersParams{})
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range page.Records {
			if u.PwID != int64(i+1) {
				t.Errorf("platform %s, record %d: pw_id %d", p, i, u.PwID)
			}
		}
		if next := mustUser(t, svc, uuid.MustParse(p), "New", "new@example.com"); next.PwID != 4 {
			t.Errorf("platform %s: next pw_id %d, want 4", p, next.PwID)
		}
	}
}

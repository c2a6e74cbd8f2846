package payments_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

// TestConcurrentWrites: many writers through two services on one database, as two
// instances behind a load balancer would be (on PostgreSQL, each commits its own
// transactions; on SQLite, each has its own group committer on the one file). Bank
// accounts added with is_default true for the same few users, and users created on one
// platform, all at once: no write fails, every user keeps exactly one default account,
// and the platform's pw_ids stay 1..N, dense and unique.
func TestConcurrentWrites(t *testing.T) {
	const workers, each, owners = 32, 8, 4
	ctx := context.Background()
	path := newDSN(t)
	svcs := []*payments.Service{mustOpenFile(t, path), mustOpenFile(t, path)}
	p := mustPlatform(t, svcs[0])
	var users []payments.User
	for i := range owners {
		u := mustUser(t, svcs[0], p.PlatformID, "Owner", fmt.Sprintf("owner%d@example.com", i))
		if err := svcs[0].VerifyUser(ctx, u.UserID.String()); err != nil { // Get Bank Account's condition
			t.Fatal(err)
		}
		users = append(users, u)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 2*workers*each)
	type added struct{ account, owner uuid.UUID }
	accounts := make(chan added, workers*each)
	for w := range workers {
		svc := svcs[w%len(svcs)]
		wg.Go(func() {
			for i := range each {
				owner := users[(w+i)%owners].UserID
				in := newAccount(owner, fmt.Sprintf("4%03d%04d", w, i))
				in.IsDefault = ptr(true)
				a, err := svc.AddBankAccount(ctx, p.PlatformID, in)
				if err != nil {
					errs <- fmt.Errorf("worker %d: add bank account %s: %w", w, in.AccountNumber, err)
				} else {
					accounts <- added{a.AccountID, owner}
				}
				email := fmt.Sprintf("w%d-u%d@example.com", w, i)
				if _, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "User", Email: &email}); err != nil {
					errs <- fmt.Errorf("worker %d: create user %s: %w", w, email, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	close(accounts)
	for err := range errs {
		t.Error(err) // a 500 (a unique violation on the one-default index), a deadlock...
	}
	if n := len(accounts); n != workers*each {
		t.Fatalf("%d accounts added, want %d", n, workers*each)
	}

	db := rawDB(t, path)
	for _, u := range users {
		n := queryInt(t, db, `SELECT count(*) FROM bank_accounts WHERE user_id = $1 AND is_default`, u.UserID.String())
		total := queryInt(t, db, `SELECT count(*) FROM bank_accounts WHERE user_id = $1`, u.UserID.String())
		if n != 1 || total != workers*each/owners {
			t.Errorf("user %s: %d default accounts of %d, want 1 of %d", u.UserID, n, total, workers*each/owners)
		}
	}
	// Through the service too: the one default the store holds is the one Get Bank
	// Account shows, on either instance.
	var defaults int
	seen := map[uuid.UUID]bool{}
	for a := range accounts {
		got, err := svcs[1].GetBankAccount(ctx, p.PlatformID, a.account.String())
		if err != nil {
			t.Fatal(err)
		}
		if got.IsDefault {
			defaults++
			if seen[a.owner] {
				t.Errorf("user %s: a second default account %s", a.owner, a.account)
			}
			seen[a.owner] = true
		}
	}
	if defaults != owners {
		t.Errorf("%d accounts shown as the default, want %d (one per user)", defaults, owners)
	}

	want := int64(owners + workers*each)
	var n, lo, hi, distinct, userCount int64
	if err := db.QueryRow(`SELECT count(*), min(pw_id), max(pw_id), count(DISTINCT pw_id),
		(SELECT user_count FROM platforms WHERE id = $1) FROM users WHERE platform_id = $1`,
		p.PlatformID.String()).Scan(&n, &lo, &hi, &distinct, &userCount); err != nil {
		t.Fatal(err)
	}
	if n != want || lo != 1 || hi != n || distinct != n || userCount != n {
		t.Errorf("users %d, pw_id %d..%d (%d distinct), user_count %d: want dense 1..%d", n, lo, hi, distinct, userCount, want)
	}
	all := listAll(t, svcs[1], p.PlatformID)
	for i, u := range all {
		if u.PwID != int64(i+1) {
			t.Fatalf("record %d of List Users: pw_id %d, want %d", i, u.PwID, i+1)
		}
	}
}

// TestOpen_Concurrent: instances started at once on a new database all open it, on one
// data key, and load the shipped payee rules once: on PostgreSQL the migrations, the key's
// set-up and the first load run under the schema's advisory lock; on either engine the
// load checks in its own write that no rules are there yet.
func TestOpen_Concurrent(t *testing.T) {
	const instances = 6
	path := newDSN(t)
	svcs := make([]*payments.Service, instances)
	errs := make([]error, instances)
	var wg sync.WaitGroup
	for i := range instances {
		wg.Go(func() {
			svcs[i], errs[i] = payments.Open(context.Background(), path, payments.Options{KeyFile: pgtest.KeyFile(path)})
		})
	}
	wg.Wait()
	keys := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
			continue
		}
		t.Cleanup(func() { svcs[i].Close() })
		keys[svcs[i].DataKeys().SealingID()] = true
	}
	if len(keys) != 1 {
		t.Errorf("data keys %v, want one for every instance", keys)
	}
	db := rawDB(t, path)
	if n := queryInt(t, db, `SELECT count(*) FROM data_keys`); n != 1 {
		t.Errorf("%d data keys stored, want 1", n)
	}
	if sets := queryInt(t, db, `SELECT count(*) FROM payee_rule_sets`); sets != 1 {
		t.Errorf("%d payee rule sets loaded, want 1", sets)
	}
}

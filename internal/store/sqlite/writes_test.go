package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/sqlite"
	"github.com/platform-payments/payments/queries"
)

// The committer's CreateUserRows (writes.go) returns the user exactly as stored, numbers
// each platform's users 1, 2, 3... in the order they are written, and writes nothing for
// a platform that does not exist; alone in its batch or many together, with some failing.
func TestCreateUserRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	const keyID, sealed = "5eedfeed5eedfeed", "v1:5eedfeed5eedfeed:c2VhbGVk" // as storetest's
	st, err := sqlite.Open(ctx, path, store.Config{Setup: func(ctx context.Context, q store.Querier) error {
		return q.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: keyID, KeyCheck: sealed, AddedAt: "2024-01-02T03:04:05.000000Z"})
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	platforms := []string{uuid.NewString(), uuid.NewString()}
	if err := st.Write(ctx, func(ctx context.Context, q store.Querier) error {
		for _, id := range platforms {
			if err := q.CreatePlatform(ctx, queries.CreatePlatformParams{
				ID: id, Name: "p", Environment: "sandbox", SecretSealed: sealed, CreatedAt: "2024-01-02T03:04:05.000000Z",
			}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	rows := func(platformID string, i int, email *string) store.NewUserRows {
		u := store.NewUserRows{
			User: queries.CreateUserParams{
				ID: uuid.NewString(), PlatformID: platformID, Name: fmt.Sprintf("User %d", i),
				Email: email, CreatedAt: fmt.Sprintf("2024-01-02T03:04:%02d.000000Z", i%60),
			},
			Wallet:   queries.CreateWalletParams{ID: uuid.NewString(), Currency: "USD"},
			Settings: queries.CreateUserSettingsParams{Currency: "USD", Timezone: "UTC", Language: "en", NotificationsEnabled: 1},
		}
		if email != nil {
			u.User.EmailKey = email
		}
		if i%3 == 0 {
			u.User.PhoneCountryCode, u.User.Phone = str("+44"), str("2079460000")
		}
		return u
	}

	// Many at once, so that batches carry several: every fifth repeats an email (a
	// conflict, failing alone), and some name no platform.
	const n = 60
	var wg sync.WaitGroup
	got := make([]queries.User, n)
	errs := make([]error, n)
	given := make([]store.NewUserRows, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			platformID := platforms[i%2]
			var email *string
			switch {
			case i%5 == 4:
				email = str(fmt.Sprintf("user%d@example.com", i-2)) // the same platform's, created or not yet
			case i%7 == 0:
				platformID = uuid.NewString()
			case i%2 == 0:
				email = str(fmt.Sprintf("user%d@example.com", i))
			}
			errs[i] = st.Write(ctx, func(ctx context.Context, q store.Querier) error {
				var err error
				given[i] = rows(platformID, i, email)
				got[i], err = q.CreateUserRows(ctx, given[i])
				return err
			})
		}()
	}
	wg.Wait()

	created := map[string]int{}
	for i := range n {
		switch {
		case i%7 == 0 && i%5 != 4:
			if !errors.Is(errs[i], sql.ErrNoRows) {
				t.Errorf("user %d of no platform: %v, want sql.ErrNoRows", i, errs[i])
			}
			continue
		case errs[i] != nil:
			if c, ok := st.Conflict(errs[i]); !ok || c != store.UserEmail || i%5 != 4 {
				t.Errorf("user %d: %v", i, errs[i])
			}
			continue
		}
		stored, err := st.Reads().GetUser(ctx, got[i].ID)
		if err != nil {
			t.Fatalf("user %d: %v", i, err)
		}
		if !reflect.DeepEqual(got[i], stored) {
			t.Errorf("user %d: CreateUserRows returned %+v, stored %+v", i, got[i], stored)
		}
		if u, in := got[i], given[i].User; u.Email != nil && (u.Email == in.Email || u.EmailKey == in.EmailKey) ||
			u.Phone != nil && (u.Phone == in.Phone || u.PhoneCountryCode == in.PhoneCountryCode) {
			t.Errorf("user %d: the row returned shares its values with the rows given", i)
		}
		created[got[i].PlatformID]++
	}
	for _, id := range platforms {
		p, err := st.Reads().GetPlatform(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if p.UserCount != int64(created[id]) {
			t.Errorf("platform %s counts %d users, %d created", id, p.UserCount, created[id])
		}
		page, err := st.Reads().ListUsersPage(ctx, queries.ListUsersPageParams{PlatformID: id, AfterPwID: 0, PageSize: n})
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range page {
			if u.PwID != int64(i+1) {
				t.Errorf("platform %s: user %d of the list has pw_id %d", id, i+1, u.PwID)
			}
		}
		if len(page) != created[id] {
			t.Errorf("platform %s lists %d users, %d created", id, len(page), created[id])
		}
	}
	var wallets, settings int
	for _, table := range []struct {
		name string
		n    *int
	}{{"wallets", &wallets}, {"user_settings", &settings}} {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table.name).Scan(table.n); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	if total := created[platforms[0]] + created[platforms[1]]; wallets != total || settings != total {
		t.Errorf("%d wallets and %d settings for %d users", wallets, settings, total)
	}
}

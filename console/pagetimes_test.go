package console_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/console"
)

// pageTimesEnv names how many users TestPageTimes seeds (it skips without it):
//
//	PAYMENTS_CONSOLE_PAGE_TIMES=100000 go test ./console -run TestPageTimes -v
const pageTimesEnv = "PAYMENTS_CONSOLE_PAGE_TIMES"

// TestPageTimes measures each page's server time on a SQLite store of many users (each
// with a wallet, settings and its user.created event), and logs the median of a few
// requests per page. It asserts nothing about the times (a loaded machine would make any
// bound flaky); it checks that each page answers 200.
func TestPageTimes(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv(pageTimesEnv))
	if err != nil || n < 1 {
		t.Skip("set " + pageTimesEnv + " to a number of users")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "payments.db")
	svc, err := payments.Open(ctx, path, payments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	platform, err := svc.CreatePlatform(ctx, "Many users", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	first, err := svc.CreateUser(ctx, platform.PlatformID, payments.NewUser{Name: "First Person", Email: new("first@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := seedUsers(ctx, path, platform.PlatformID.String(), n-1); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d users and their events in %v", n, time.Since(start).Round(time.Millisecond))
	svc, err = payments.Open(ctx, path, payments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	h := console.New(svc, console.Options{Token: token})

	login := httptest.NewRecorder()
	h.ServeHTTP(login, httptest.NewRequest(http.MethodGet, "/console/login?token="+token, nil))
	cookies := login.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("login: %d, cookies %v", login.Code, cookies)
	}
	events, err := svc.ListEvents(ctx, platform.PlatformID, payments.EventQuery{Type: "user.created", Limit: "1"})
	if err != nil || len(events.Events) == 0 {
		t.Fatal("no event", err)
	}
	p := "/console/platforms/" + platform.PlatformID.String()
	seeded, err := svc.ListUsers(ctx, platform.PlatformID, payments.ListUsersParams{RowsPerPage: 10, PageNo: 1})
	if err != nil || len(seeded.Records) < 2 {
		t.Fatal("no seeded user", err)
	}
	firstSeeded := seeded.Records[1].UserID.String() // the oldest seeded user: its event is the oldest
	pages := []string{"/console/", p + "/users", p + "/users?page=5000", p + "/users?q=user099999@example.com",
		p + "/users?q=person+0999", p + "/users?q=person", p + "/users?q=nobody", p + "/users?q=nobody&after=80000", p + "/users/" + first.UserID.String(), p + "/users/" + firstSeeded,
		p + "/events", p + "/events?type=user.created&since=2025-01-01T12:00", p + "/events/" + events.Events[0].ID.String(),
		p + "/endpoints", "/console/rates", "/console/rules?country=GB&currency=GBP", "/console/operations"}
	const runs = 7
	for _, page := range pages {
		times := make([]time.Duration, 0, runs)
		var last string
		for range runs {
			req := httptest.NewRequest(http.MethodGet, page, nil)
			req.AddCookie(cookies[0])
			rec := httptest.NewRecorder()
			began := time.Now()
			h.ServeHTTP(rec, req)
			times = append(times, time.Since(began))
			last = rec.Body.String()
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", page, rec.Code, rec.Body)
			}
		}
		if page == p+"/users?q=nobody" && !strings.Contains(last, "after=20000") {
			t.Errorf("a search for a name nobody has: no link to search on after the first window")
		}
		slices.Sort(times)
		t.Logf("%-70s median %8v  max %8v", page, times[runs/2].Round(10*time.Microsecond), times[runs-1].Round(10*time.Microsecond))
	}
}

// seedUsers writes n users of the platform (pw_id 2 on), each with its wallet, settings and
// user.created event, with direct SQL in one transaction, row for row what CreateUser
// writes (as httpserver's benchmarks seed theirs).
func seedUsers(ctx context.Context, path, platformID string, n int) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmts := map[string]string{
		"user": `INSERT INTO users (id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, created_at)
			VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)`,
		"wallet":   `INSERT INTO wallets (id, user_id, currency, balance, created_at) VALUES (?, ?, 'USD', '0', ?)`,
		"settings": `INSERT INTO user_settings (user_id, currency, timezone, language, notifications_enabled, two_factor_enabled, created_at) VALUES (?, 'USD', 'UTC', 'en', 1, 0, ?)`,
		"event":    `INSERT INTO events (id, platform_id, type, created_at, payload) VALUES (?, ?, 'user.created', ?, ?)`,
	}
	prepared := map[string]*sql.Stmt{}
	for k, q := range stmts {
		if prepared[k], err = tx.PrepareContext(ctx, q); err != nil {
			return err
		}
	}
	rng := rand.NewChaCha8([32]byte{})
	begin := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const layout = "2006-01-02T15:04:05.000000Z"
	for i := 1; i <= n; i++ {
		seq := i + 1
		id, err := uuid.NewRandomFromReader(rng)
		if err != nil {
			return err
		}
		wallet, err := uuid.NewRandomFromReader(rng)
		if err != nil {
			return err
		}
		at := begin.Add(time.Duration(seq) * time.Second)
		created := at.Format(layout)
		eventID, err := uuid.NewV7FromReader(rng)
		if err != nil {
			return err
		}
		ms := uint64(at.UnixMilli()) // #nosec G115 -- after 1970
		for b := 0; b < 6; b++ {
			eventID[b] = byte(ms >> (40 - 8*b))
		}
		payload := fmt.Sprintf(`{"id":%q,"type":"user.created","timestamp":%q,"platform_id":%q,"environment":"sandbox","data":{"object":{"type":"user","id":%q}}}`,
			eventID.String(), created, platformID, id.String())
		for _, step := range []struct {
			stmt string
			args []any
		}{
			{"user", []any{id.String(), platformID, seq, fmt.Sprintf("Person %06d", seq), fmt.Sprintf("User%06d@Example.com", seq), fmt.Sprintf("user%06d@example.com", seq), created}},
			{"wallet", []any{wallet.String(), id.String(), created}},
			{"settings", []any{id.String(), created}},
			{"event", []any{eventID.String(), platformID, created, payload}},
		} {
			if _, err := prepared[step.stmt].ExecContext(ctx, step.args...); err != nil {
				return fmt.Errorf("%s %d: %w", step.stmt, seq, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE platforms SET user_count = ? WHERE id = ?`, n+1, platformID); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

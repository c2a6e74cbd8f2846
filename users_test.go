package payments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

var canonicalUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestCreateUser(t *testing.T) {
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		path := newDSN(t)
		// A clock off UTC and finer than the stored precision.
		kolkata := time.FixedZone("IST", 5*3600+1800)
		now, _ := fixedClock(time.Date(2026, 1, 2, 15, 4, 5, 123456789, kolkata))
		svc := mustOpenFile(t, path, payments.Options{Now: now})
		p := mustPlatform(t, svc)

		in := payments.NewUser{Name: "Ada Lovelace", Email: ptr("Ada@Example.com"), PhoneCountryCode: ptr("+44"), Phone: ptr("2079460000")}
		u, err := svc.CreateUser(ctx, p.PlatformID, in)
		if err != nil {
			t.Fatal(err)
		}
		if u.Name != in.Name || *u.Email != *in.Email || *u.PhoneCountryCode != "+44" || *u.Phone != "2079460000" {
			t.Errorf("user = %+v, want the fields of %+v", u, in)
		}
		if u.UserID == uuid.Nil || !canonicalUUID.MatchString(u.UserID.String()) {
			t.Errorf("user_id = %q, not a canonical UUID", u.UserID)
		}
		wantCreated := time.Date(2026, 1, 2, 9, 34, 5, 123456000, time.UTC)
		if !u.CreatedAt.Equal(wantCreated) || u.CreatedAt.Location() != time.UTC {
			t.Errorf("created_at = %v, want %v", u.CreatedAt, wantCreated)
		}
		raw, _ := json.Marshal(u)
		var asJSON map[string]any
		json.Unmarshal(raw, &asJSON)
		if asJSON["created_at"] != "2026-01-02T09:34:05.123456Z" || asJSON["user_id"] != u.UserID.String() {
			t.Errorf("JSON = %s", raw)
		}

		// What is read back is what was returned.
		got, err := svc.GetUser(ctx, p.PlatformID, u.UserID.String())
		if err != nil {
			t.Fatal(err)
		}
		if canonicalJSON(t, got) != canonicalJSON(t, u) {
			t.Errorf("GetUser = %+v, want %+v", got, u)
		}

		// The wallet and the settings come with the user.
		db := rawDB(t, path)
		if n := queryInt(t, db, `SELECT count(*) FROM wallets WHERE user_id = $1`, u.UserID.String()); n != 1 {
			t.Errorf("%d wallets, want 1", n)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM user_settings WHERE user_id = $1`, u.UserID.String()); n != 1 {
			t.Errorf("%d settings rows, want 1", n)
		}
		var currency, balance, walletCreated, settingsCreated, stored string
		if err := db.QueryRow(`SELECT w.currency, w.balance, w.created_at, s.created_at, u.id
			FROM users u JOIN wallets w ON w.user_id = u.id JOIN user_settings s ON s.user_id = u.id
			WHERE u.id = $1`, u.UserID.String()).Scan(&currency, &balance, &walletCreated, &settingsCreated, &stored); err != nil {
			t.Fatal(err)
		}
		if currency != "USD" || balance != "0" || walletCreated != settingsCreated || !strings.HasPrefix(walletCreated, "2026-01-02T09:34:05.123456") {
			t.Errorf("wallet %s %s %s, settings %s", currency, balance, walletCreated, settingsCreated)
		}
		if stored != u.UserID.String() {
			t.Errorf("stored id %q, want the canonical %q", stored, u.UserID)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM users WHERE id = $1 AND verified_at IS NULL`, u.UserID.String()); n != 1 {
			t.Error("a new user is already verified")
		}
	})

	t.Run("OKNullMeansAbsent", func(t *testing.T) {
		// A client of the FastAPI service sends null for what it leaves out: stored and
		// answered as if the fields were not there.
		path := newDSN(t)
		svc := mustOpenFile(t, path)
		p := mustPlatform(t, svc)
		in := decoded[payments.NewUser](t, svc, "users_create",
			body(`{"name":"Ada","email":"ada@example.com","phone_country_code":null,"phone":null}`))
		u, err := svc.CreateUser(ctx, p.PlatformID, in)
		if err != nil {
			t.Fatal(err)
		}
		if u.Email == nil || *u.Email != "ada@example.com" || u.PhoneCountryCode != nil || u.Phone != nil {
			t.Errorf("user = %+v, want phone and its code absent", u)
		}
		got, err := svc.GetUser(ctx, p.PlatformID, u.UserID.String())
		if err != nil || canonicalJSON(t, got) != canonicalJSON(t, u) {
			t.Errorf("GetUser = %+v, %v; want %+v", got, err, u)
		}
		if n := queryInt(t, rawDB(t, path), `SELECT count(*) FROM users WHERE id = $1 AND phone IS NULL AND phone_country_code IS NULL`,
			u.UserID.String()); n != 1 {
			t.Error("phone stored as something other than NULL")
		}
	})

	t.Run("OKPwIDPerPlatform", func(t *testing.T) {
		// Each platform numbers its own users 1, 2, 3: a platform learns nothing of how
		// many users another has.
		svc := mustOpen(t)
		p1, p2 := mustPlatform(t, svc), mustPlatform(t, svc)
		for i := range 6 {
			u := mustUser(t, svc, []uuid.UUID{p1.PlatformID, p2.PlatformID}[i%2], "User", fmt.Sprintf("u%d@example.com", i))
			if want := int64(i/2 + 1); u.PwID != want {
				t.Errorf("user %d: pw_id %d, want %d", i, u.PwID, want)
			}
			got, err := svc.GetUser(ctx, []uuid.UUID{p1.PlatformID, p2.PlatformID}[i%2], u.UserID.String())
			if err != nil || got.PwID != u.PwID {
				t.Errorf("user %d read back with pw_id %d (%v), created with %d", i, got.PwID, err, u.PwID)
			}
		}
	})

	t.Run("OKOptionsInjected", func(t *testing.T) {
		newID := counterIDs()
		issued := map[uuid.UUID]bool{}
		var mu sync.Mutex
		now, setNow := fixedClock(time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC))
		svc := mustOpen(t, payments.Options{Now: now, NewID: func() uuid.UUID {
			id := newID()
			mu.Lock()
			issued[id] = true
			mu.Unlock()
			return id
		}})
		p := mustPlatform(t, svc)
		first := mustUser(t, svc, p.PlatformID, "First", "first@example.com")
		setNow(time.Date(2030, 6, 1, 0, 0, 1, 0, time.UTC))
		second := mustUser(t, svc, p.PlatformID, "Second", "second@example.com")

		for _, id := range []uuid.UUID{p.PlatformID, first.UserID, second.UserID} {
			if !issued[id] {
				t.Errorf("id %s was not made by Options.NewID", id)
			}
		}
		if !first.CreatedAt.Equal(now().Add(-time.Second)) || !second.CreatedAt.Equal(now()) {
			t.Errorf("created_at %v, %v: not the injected clock", first.CreatedAt, second.CreatedAt)
		}
		if !svc.Now().Equal(now()) {
			t.Errorf("Service.Now = %v, want %v", svc.Now(), now())
		}
	})

	t.Run("OKWithoutEmail", func(t *testing.T) {
		// Users reached by phone only have no email to clash on.
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		for range 2 {
			if _, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Ada", PhoneCountryCode: ptr("+44"), Phone: ptr("2079460000")}); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("ErrUnknownPlatform", func(t *testing.T) {
		svc := mustOpen(t)
		_, err := svc.CreateUser(ctx, uuid.New(), payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")})
		errorOf(t, err, payments.CodeNotFound)
	})
}

func TestCreateUser_Conflict(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	svc := mustOpenFile(t, path)
	db := rawDB(t, path)
	p := mustPlatform(t, svc)
	mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")

	counts := func() string {
		return fmt.Sprintf("users=%d wallets=%d settings=%d user_count=%d",
			queryInt(t, db, `SELECT count(*) FROM users`),
			queryInt(t, db, `SELECT count(*) FROM wallets`),
			queryInt(t, db, `SELECT count(*) FROM user_settings`),
			queryInt(t, db, `SELECT user_count FROM platforms WHERE id = $1`, p.PlatformID.String()))
	}
	before := counts()

	for _, email := range []string{"ada@example.com", "ADA@Example.COM"} {
		t.Run("ErrDuplicate/"+email, func(t *testing.T) {
			_, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Ada again", Email: ptr(email)})
			e := errorOf(t, err, payments.CodeConflict)
			if e.Message == "" {
				t.Error("no message")
			}
			if after := counts(); after != before {
				t.Errorf("after a conflict: %s, before: %s", after, before)
			}
		})
	}

	t.Run("OKNextUserAfterConflict", func(t *testing.T) {
		u := mustUser(t, svc, p.PlatformID, "Bob", "bob@example.com")
		if u.PwID != 2 {
			t.Errorf("pw_id = %d, want 2: a failed creation used a number", u.PwID)
		}
		if stored := queryInt(t, db, `SELECT pw_id FROM users WHERE id = $1`, u.UserID.String()); stored != 2 {
			t.Errorf("stored pw_id = %d, want 2", stored)
		}
		page, err := svc.ListUsers(ctx, p.PlatformID, payments.ListUsersParams{})
		if err != nil {
			t.Fatal(err)
		}
		if page.TotalRecords != 2 || len(page.Records) != 2 {
			t.Errorf("total %d, %d records, want 2", page.TotalRecords, len(page.Records))
		}
	})

	t.Run("OKSameEmailOtherPlatform", func(t *testing.T) {
		other := mustPlatform(t, svc)
		mustUser(t, svc, other.PlatformID, "Ada", "ada@example.com")
	})
}

// listAll reads every user of a platform, 100 per page.
func listAll(t *testing.T, svc *payments.Service, platformID uuid.UUID) []payments.User {
	t.Helper()
	var all []payments.User
	for page := 1; ; page++ {
		p, err := svc.ListUsers(context.Background(), platformID, payments.ListUsersParams{RowsPerPage: 100, PageNo: page})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p.Records...)
		if len(p.Records) < 100 {
			if int64(len(all)) != p.TotalRecords {
				t.Errorf("listed %d users, total says %d", len(all), p.TotalRecords)
			}
			return all
		}
	}
}

func names(users []payments.User) string {
	s := make([]string, len(users))
	for i, u := range users {
		s[i] = u.Name
	}
	return strings.Join(s, ",")
}

func TestListUsers(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	a, b, empty := mustPlatform(t, svc), mustPlatform(t, svc), mustPlatform(t, svc)
	var created []payments.User
	for i := 1; i <= 25; i++ {
		created = append(created, mustUser(t, svc, a.PlatformID, fmt.Sprintf("A%02d", i), fmt.Sprintf("a%d@example.com", i)))
		if i%10 == 0 { // interleave the other platform's users
			mustUser(t, svc, b.PlatformID, fmt.Sprintf("B%d", i/10), fmt.Sprintf("b%d@example.com", i))
		}
	}
	wantNames := func(from, to int) string { return names(created[from-1 : to]) }

	for _, tc := range []struct {
		name     string
		platform uuid.UUID
		params   payments.ListUsersParams
		want     string
		total    int64
	}{
		{"OKDefaults", a.PlatformID, payments.ListUsersParams{}, wantNames(1, 10), 25},
		{"OKPage2", a.PlatformID, payments.ListUsersParams{PageNo: 2}, wantNames(11, 20), 25},
		{"OKLastPartialPage", a.PlatformID, payments.ListUsersParams{RowsPerPage: 10, PageNo: 3}, wantNames(21, 25), 25},
		{"OK20PerPage", a.PlatformID, payments.ListUsersParams{RowsPerPage: 20, PageNo: 2}, wantNames(21, 25), 25},
		{"OKAllOnOnePage", a.PlatformID, payments.ListUsersParams{RowsPerPage: 50}, wantNames(1, 25), 25},
		{"OKPastTheEnd", a.PlatformID, payments.ListUsersParams{PageNo: 4}, "", 25},
		{"OKFarPastTheEnd", a.PlatformID, payments.ListUsersParams{RowsPerPage: 100, PageNo: 2147483647}, "", 25},
		{"OKOtherPlatformOnlyItsOwn", b.PlatformID, payments.ListUsersParams{}, "B1,B2", 2},
		{"OKEmptyPlatform", empty.PlatformID, payments.ListUsersParams{}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := svc.ListUsers(ctx, tc.platform, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if page.Records == nil {
				t.Error("Records is nil, want an empty list")
			}
			if got := names(page.Records); got != tc.want {
				t.Errorf("records %s, want %s", got, tc.want)
			}
			if page.TotalRecords != tc.total {
				t.Errorf("total %d, want %d", page.TotalRecords, tc.total)
			}
		})
	}

	t.Run("OKCreationOrder", func(t *testing.T) {
		all := listAll(t, svc, a.PlatformID)
		if canonicalJSON(t, all) != canonicalJSON(t, created) {
			t.Errorf("listed:\n%s\nwant, as created:\n%s", names(all), names(created))
		}
	})

	// A client of the FastAPI service may send null for either: the default, as for {}.
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"OKNullsAreDefaults", `{"rows_per_page":null,"page_no":null}`, wantNames(1, 10)},
		{"OKNullRowsPerPage", `{"rows_per_page":null,"page_no":2}`, wantNames(11, 20)},
		{"OKNullPageNo", `{"rows_per_page":20,"page_no":null}`, wantNames(1, 20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := svc.ListUsers(ctx, a.PlatformID, decoded[payments.ListUsersParams](t, svc, "users_list", body(tc.raw)))
			if err != nil {
				t.Fatal(err)
			}
			if got := names(page.Records); got != tc.want || page.TotalRecords != 25 {
				t.Errorf("records %s (total %d), want %s", got, page.TotalRecords, tc.want)
			}
		})
	}

	t.Run("ErrRowsPerPage", func(t *testing.T) {
		_, err := svc.ListUsers(ctx, a.PlatformID, payments.ListUsersParams{RowsPerPage: 15})
		assertFields(t, err, fieldErrors{{Type: "literal_error", Loc: loc("body", "rows_per_page"), Input: 15,
			Msg: "Input should be 10, 20, 50 or 100", Ctx: object{"expected": "10, 20, 50 or 100"}}})
	})
	t.Run("ErrPageNo", func(t *testing.T) {
		_, err := svc.ListUsers(ctx, a.PlatformID, payments.ListUsersParams{PageNo: -1})
		assertFields(t, err, fieldErrors{{Type: "greater_than_equal", Loc: loc("body", "page_no"), Input: -1,
			Msg: "Input should be greater than or equal to 1", Ctx: object{"ge": 1}}})
	})
	t.Run("ErrUnknownPlatform", func(t *testing.T) {
		_, err := svc.ListUsers(ctx, uuid.New(), payments.ListUsersParams{})
		errorOf(t, err, payments.CodeNotFound)
	})
}

// notPanicking runs f, turning a panic into a test failure so that the other tests still
// run.
func notPanicking(t *testing.T, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("panic: %v", r)
		}
	}()
	f()
}

func TestGetUser(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p, other := mustPlatform(t, svc), mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	foreign := mustUser(t, svc, other.PlatformID, "Eve", "eve@example.com")
	id := u.UserID.String()

	for _, form := range []struct{ name, id string }{
		{"OK", id},
		{"OKUpperCase", strings.ToUpper(id)},
		{"OKSimple", strings.ReplaceAll(id, "-", "")},
		{"OKBraced", "{" + id + "}"},
		{"OKURN", "urn:uuid:" + id},
	} {
		t.Run(form.name, func(t *testing.T) {
			got, err := svc.GetUser(ctx, p.PlatformID, form.id)
			if err != nil {
				t.Fatal(err)
			}
			if canonicalJSON(t, got) != canonicalJSON(t, u) {
				t.Errorf("got %+v, want %+v", got, u)
			}
		})
	}

	t.Run("ErrOtherPlatformsUser", func(t *testing.T) {
		_, err := svc.GetUser(ctx, p.PlatformID, foreign.UserID.String())
		e := errorOf(t, err, payments.CodeNotFound)
		_, err = svc.GetUser(ctx, p.PlatformID, uuid.NewString())
		if unknown := errorOf(t, err, payments.CodeNotFound); unknown.Message != e.Message {
			t.Errorf("a foreign user answers %q, an unknown one %q: existence leaks", e.Message, unknown.Message)
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		_, err := svc.GetUser(ctx, p.PlatformID, uuid.NewString())
		errorOf(t, err, payments.CodeNotFound)
	})
	t.Run("ErrMalformed", func(t *testing.T) {
		_, err := svc.GetUser(ctx, p.PlatformID, "not-a-uuid")
		assertFields(t, err, fieldErrors{uuidParsing(
			"invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1",
			"not-a-uuid", "path", "user_id")})
	})
	// Forms pydantic refuses, the simple form braced or prefixed: a 422, and above all
	// not a panic.
	simple := strings.ReplaceAll(id, "-", "")
	for _, tc := range []struct{ name, id string }{
		{"ErrBracedSimple", "{" + simple + "}"},
		{"ErrURNSimple", "urn:uuid:" + simple},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notPanicking(t, func() {
				_, err := svc.GetUser(ctx, p.PlatformID, tc.id)
				assertFields(t, err, fieldErrors{uuidParsing("invalid group count: expected 5, found 1", tc.id, "path", "user_id")})
			})
		})
	}
}

func TestVerifyUser(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	now, setNow := fixedClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	svc := mustOpenFile(t, path, payments.Options{Now: now})
	db := rawDB(t, path)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	verifiedAt := func() string {
		var s *string
		if err := db.QueryRow(`SELECT verified_at FROM users WHERE id = $1`, u.UserID.String()).Scan(&s); err != nil {
			t.Fatal(err)
		}
		if s == nil {
			return "<null>"
		}
		return *s
	}
	if got := verifiedAt(); got != "<null>" {
		t.Fatalf("verified_at = %s before verification", got)
	}

	t.Run("OK", func(t *testing.T) {
		setNow(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
		if err := svc.VerifyUser(ctx, u.UserID.String()); err != nil {
			t.Fatal(err)
		}
		if got := verifiedAt(); !strings.HasPrefix(got, "2026-03-02T12:00:00") {
			t.Errorf("verified_at = %s, want the clock's time", got)
		}
	})
	t.Run("OKIdempotent", func(t *testing.T) {
		before := verifiedAt()
		setNow(time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC))
		if err := svc.VerifyUser(ctx, strings.ToUpper(u.UserID.String())); err != nil {
			t.Fatal(err)
		}
		if got := verifiedAt(); got != before {
			t.Errorf("verified_at moved from %s to %s", before, got)
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		errorOf(t, svc.VerifyUser(ctx, uuid.NewString()), payments.CodeNotFound)
	})
	t.Run("ErrMalformed", func(t *testing.T) {
		errorOf(t, svc.VerifyUser(ctx, "user-1"), payments.CodeInvalid)
	})
}

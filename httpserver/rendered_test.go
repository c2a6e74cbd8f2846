package httpserver

import (
	"fmt"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// renderedCases are users whose JSON tests the rendering: every field set, the optional
// ones absent, and text that encoding/json escapes or leaves alone (HTML, U+2028, quotes).
func renderedCases() map[string]payments.User {
	text := func(s string) *string { return &s }
	created := time.Date(2026, 11, 25, 14, 25, 42, 257113000, time.UTC)
	return map[string]payments.User{
		"OK": {PwID: 1, UserID: uuid.MustParse("01a21319-1b70-7cdb-aea0-a91045e2df0c"), Name: "Ada Lovelace",
			Email: text("ada@example.com"), PhoneCountryCode: text("+44"), Phone: text("2079460000"), CreatedAt: created},
		"Absent":      {PwID: 2, UserID: uuid.New(), Name: "No Contact", CreatedAt: created.Add(time.Second)},
		"HTML":        {PwID: 3, UserID: uuid.New(), Name: `<b>"Tom" & 'Jerry'</b>`, Email: text("a&b@example.com"), CreatedAt: created},
		"Separators":  {PwID: 4, UserID: uuid.New(), Name: "line\u2028para\u2029tab\tback\\slash", CreatedAt: created},
		"Unicode":     {PwID: 5, UserID: uuid.New(), Name: "Zoë Ærøskøbing 東京", CreatedAt: created},
		"WholeSecond": {PwID: 6, UserID: uuid.New(), Name: "Whole", CreatedAt: created.Truncate(time.Second)},
	}
}

// TestWriteRendered: a user's rendered answer is byte for byte the envelope writeJSON
// writes, headers and status too, the first time and from the memo.
func TestWriteRendered(t *testing.T) {
	users := newRenderedUsers(maxRenderedUsers)
	for name, u := range renderedCases() {
		t.Run(name, func(t *testing.T) {
			const at = 1795616744
			want := httptest.NewRecorder()
			writeJSON(want, 200, payments.Envelope{Success: true, Message: "Success", Data: u, QueryGeneratedTime: at})
			for _, pass := range []string{"rendered", "memo"} {
				got := httptest.NewRecorder()
				writeRendered(got, rendered{data: users.json(u), at: at})
				if got.Code != want.Code || got.Body.String() != want.Body.String() ||
					!reflect.DeepEqual(got.Header(), want.Header()) {
					t.Errorf("%s: %d %v %s\nwant %d %v %s", pass, got.Code, got.Header(), got.Body,
						want.Code, want.Header(), want.Body)
				}
			}
		})
	}
}

// TestRenderedUsersNeverStale: a user that differs from the one rendered in any field,
// under the same id, is rendered again, whatever the field; a field sameUser does not
// compare fails the test until it does.
func TestRenderedUsersNeverStale(t *testing.T) {
	base := renderedCases()["OK"]
	typ := reflect.TypeFor[payments.User]()
	for i := range typ.NumField() {
		field := typ.Field(i)
		t.Run(field.Name, func(t *testing.T) {
			changed := copyUser(base)
			changeField(t, reflect.ValueOf(&changed).Elem().Field(i))
			if sameUser(base, changed) {
				t.Fatalf("sameUser takes a user with another %s for the same", field.Name)
			}
			users := newRenderedUsers(maxRenderedUsers)
			users.json(copyUser(base))
			got := string(users.json(changed))
			want := string(encodeJSON(200, changed))
			if got+"\n" != want {
				t.Errorf("after a change of %s: %s, want %s", field.Name, got, want)
			}
		})
	}
	if !sameUser(base, copyUser(base)) {
		t.Error("sameUser tells a user from its copy")
	}
}

// changeField sets v to another value of its type.
func changeField(t *testing.T, v reflect.Value) {
	switch x := v.Addr().Interface().(type) {
	case *int64:
		*x++
	case *string:
		*x += "x"
	case **string:
		if *x == nil {
			s := "new"
			*x = &s
		} else {
			*x = nil
		}
	case *uuid.UUID:
		x[15] ^= 1
	case *time.Time:
		*x = x.Add(time.Microsecond)
	default:
		t.Fatalf("no change known for a %s: teach changeField and sameUser", v.Type())
	}
}

// TestRenderedUsersConcurrent: many readers of the same users at once, and more users
// than fit, each get its own JSON (go test -race).
func TestRenderedUsersConcurrent(t *testing.T) {
	users := newRenderedUsers(16)
	all := make([]payments.User, 64)
	want := make([]string, len(all))
	for i := range all {
		all[i] = payments.User{PwID: int64(i), UserID: uuid.New(), Name: fmt.Sprint("User ", i), CreatedAt: time.Unix(int64(i), 0).UTC()}
		want[i] = string(encodeJSON(200, all[i]))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 500 {
				i := (g*31 + n) % len(all)
				if got := string(users.json(copyUser(all[i]))); got+"\n" != want[i] {
					t.Errorf("user %d: %s, want %s", i, got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// copyUser returns a copy of u sharing no memory with it, as GetUser returns each time.
func copyUser(u payments.User) payments.User {
	for _, p := range []**string{&u.Email, &u.PhoneCountryCode, &u.Phone} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return u
}

// TestUserJSON: userJSON writes what encodeJSON writes, byte for byte, whether it writes
// the user itself (printable ASCII) or leaves it to encoding/json.
func TestUserJSON(t *testing.T) {
	text := func(s string) *string { return &s }
	created := time.Date(2026, 11, 25, 14, 25, 42, 257113000, time.UTC)
	times := []time.Time{created, created.Truncate(time.Second), created.Truncate(time.Millisecond), {},
		created.In(time.FixedZone("plus", 5*3600+30*60)), created.In(time.FixedZone("odd", 7))}
	texts := []*string{nil, text(""), text("ada@example.com"), text("+44"), text(`q"uote`), text(`back\slash`),
		text("<&>"), text("tab\t"), text("\x7f"), text("é"), text("\u2028"), text("\xff")}
	for _, u := range renderedCases() {
		for _, at := range times {
			for i, s := range texts {
				u.CreatedAt = at
				u.Email, u.PhoneCountryCode, u.Phone = s, texts[(i+1)%len(texts)], texts[(i+5)%len(texts)]
				if s != nil {
					u.Name = *s
				}
				want := string(encodeJSON(200, u))
				if got := string(userJSON(u)) + "\n"; got != want {
					t.Fatalf("%+v:\n got %s\nwant %s", u, got, want)
				}
			}
		}
	}
}

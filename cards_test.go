package payments_test

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Cards: created through the library (and the command line) only, deleted through the API
// (CONTRACT.md section 5: soft delete, {"card_id", "deleted": true}, 404 afterwards and
// for every foreign id).

const cardBrands = "'visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb' or 'unionpay'"

func atLeast(ge int, input any, l ...any) payments.FieldError {
	return payments.FieldError{Type: "greater_than_equal", Loc: l, Input: input,
		Msg: "Input should be greater than or equal to " + strconv.Itoa(ge), Ctx: object{"ge": ge}}
}

func atMost(le int, input any, l ...any) payments.FieldError {
	return payments.FieldError{Type: "less_than_equal", Loc: l, Input: input,
		Msg: "Input should be less than or equal to " + strconv.Itoa(le), Ctx: object{"le": le}}
}

var visaCard = payments.NewCard{Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: 2030}

// mustCard saves a visa card for the user.
func mustCard(tb testing.TB, svc *payments.Service, userID uuid.UUID) payments.Card {
	tb.Helper()
	c, err := svc.AddCard(context.Background(), userID.String(), visaCard)
	if err != nil {
		tb.Fatalf("add card: %v", err)
	}
	return c
}

func TestAddCard(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	now, _ := fixedClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	svc := mustOpenFile(t, path, payments.Options{Now: now})
	db := rawDB(t, path)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")

	t.Run("OK", func(t *testing.T) {
		got, err := svc.AddCard(ctx, u.UserID.String(), payments.NewCard{Brand: "amex", Last4: "0005", ExpMonth: 1, ExpYear: 2031})
		if err != nil {
			t.Fatal(err)
		}
		// The record a card needs, and nothing more: no number, no security code.
		want := object{"card_id": got.CardID.String(), "user_id": u.UserID.String(), "brand": "amex", "last4": "0005",
			"exp_month": 1, "exp_year": 2031, "created_at": "2026-06-01T08:00:00Z"}
		if g, w := canonicalJSON(t, got), canonicalJSON(t, want); g != w {
			t.Errorf("card:\n got %s\nwant %s", g, w)
		}
		if got.CardID == uuid.Nil || !canonicalUUID.MatchString(got.CardID.String()) {
			t.Errorf("card_id = %q, not a canonical UUID", got.CardID)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM cards WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL`,
			got.CardID.String(), u.UserID.String()); n != 1 {
			t.Error("the card is not stored for the user")
		}
	})
	for _, tc := range []struct {
		name string
		in   payments.NewCard
	}{
		{"OKMonthBounds", payments.NewCard{Brand: "mastercard", Last4: "4444", ExpMonth: 12, ExpYear: 2099}},
		{"OKYearLow", payments.NewCard{Brand: "unionpay", Last4: "0000", ExpMonth: 1, ExpYear: 2000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := svc.AddCard(ctx, u.UserID.String(), tc.in); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, brand := range []string{"visa", "mastercard", "amex", "discover", "diners", "jcb", "unionpay"} {
		t.Run("OKBrand/"+brand, func(t *testing.T) {
			in := visaCard
			in.Brand = brand
			if c, err := svc.AddCard(ctx, u.UserID.String(), in); err != nil || c.Brand != brand {
				t.Fatalf("card %+v, %v", c, err)
			}
		})
	}

	card := func(f func(c *payments.NewCard)) payments.NewCard {
		c := visaCard
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name   string
		userID string
		in     payments.NewCard
		want   fieldErrors
	}{
		{"ErrBrandUnknown", u.UserID.String(), card(func(c *payments.NewCard) { c.Brand = "maestro" }),
			fieldErrors{enumErr(cardBrands, "maestro", "body", "brand")}},
		{"ErrBrandUpperCase", u.UserID.String(), card(func(c *payments.NewCard) { c.Brand = "VISA" }),
			fieldErrors{enumErr(cardBrands, "VISA", "body", "brand")}},
		{"ErrLast4ThreeDigits", u.UserID.String(), card(func(c *payments.NewCard) { c.Last4 = "424" }),
			fieldErrors{patternMismatch("^[0-9]{4}$", "424", "body", "last4")}},
		{"ErrLast4Letters", u.UserID.String(), card(func(c *payments.NewCard) { c.Last4 = "42x2" }),
			fieldErrors{patternMismatch("^[0-9]{4}$", "42x2", "body", "last4")}},
		{"ErrLast4FullNumber", u.UserID.String(), card(func(c *payments.NewCard) { c.Last4 = "4242424242424242" }),
			fieldErrors{tooLong(4, "4242424242424242", "body", "last4")}},
		{"ErrLast4Empty", u.UserID.String(), card(func(c *payments.NewCard) { c.Last4 = "" }),
			fieldErrors{tooShort(1, "", "body", "last4")}},
		{"ErrExpMonth0", u.UserID.String(), card(func(c *payments.NewCard) { c.ExpMonth = 0 }),
			fieldErrors{atLeast(1, 0, "body", "exp_month")}},
		{"ErrExpMonth13", u.UserID.String(), card(func(c *payments.NewCard) { c.ExpMonth = 13 }),
			fieldErrors{atMost(12, 13, "body", "exp_month")}},
		{"ErrExpYear1999", u.UserID.String(), card(func(c *payments.NewCard) { c.ExpYear = 1999 }),
			fieldErrors{atLeast(2000, 1999, "body", "exp_year")}},
		{"ErrExpYear2100", u.UserID.String(), card(func(c *payments.NewCard) { c.ExpYear = 2100 }),
			fieldErrors{atMost(2099, 2100, "body", "exp_year")}},
		{"ErrExpYearTwoDigits", u.UserID.String(), card(func(c *payments.NewCard) { c.ExpYear = 30 }),
			fieldErrors{atLeast(2000, 30, "body", "exp_year")}},
		{"ErrUserIDMalformed", "user-1", visaCard,
			fieldErrors{uuidParsing("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `u` at 1",
				"user-1", "path", "user_id")}},
		{"ErrSeveral", "user-1", payments.NewCard{Brand: "", Last4: "1", ExpMonth: -1, ExpYear: 3000},
			fieldErrors{
				uuidParsing("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `u` at 1",
					"user-1", "path", "user_id"),
				enumErr(cardBrands, "", "body", "brand"),
				patternMismatch("^[0-9]{4}$", "1", "body", "last4"),
				atLeast(1, -1, "body", "exp_month"),
				atMost(2099, 3000, "body", "exp_year"),
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := queryInt(t, db, `SELECT count(*) FROM cards`)
			_, err := svc.AddCard(ctx, tc.userID, tc.in)
			assertFields(t, err, tc.want)
			if after := queryInt(t, db, `SELECT count(*) FROM cards`); after != before {
				t.Errorf("a refused card was stored")
			}
		})
	}
	t.Run("ErrUnknownUser", func(t *testing.T) {
		_, err := svc.AddCard(ctx, uuid.NewString(), visaCard)
		errorOf(t, err, payments.CodeNotFound)
	})
}

func TestDeleteCard(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	now, setNow := fixedClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	svc := mustOpenFile(t, path, payments.Options{Now: now})
	db := rawDB(t, path)
	a, b := mustPlatform(t, svc), mustPlatform(t, svc)
	ada := mustUser(t, svc, a.PlatformID, "Ada", "ada@example.com")
	bob := mustUser(t, svc, a.PlatformID, "Bob", "bob@example.com")
	eve := mustUser(t, svc, b.PlatformID, "Eve", "eve@example.com")
	adas, bobs, eves := mustCard(t, svc, ada.UserID), mustCard(t, svc, bob.UserID), mustCard(t, svc, eve.UserID)

	deletedAt := func(id uuid.UUID) string {
		var at sql.NullString
		if err := db.QueryRow(`SELECT deleted_at FROM cards WHERE id = $1`, id.String()).Scan(&at); err != nil {
			t.Fatal(err) // the row is never removed
		}
		if !at.Valid {
			return "<null>"
		}
		return at.String
	}
	del := func(platform, user, card uuid.UUID) (payments.DeletedCard, error) {
		return svc.DeleteCard(ctx, platform, user.String(), payments.CardDeletion{CardID: card.String()})
	}

	_, err := del(a.PlatformID, ada.UserID, uuid.New())
	cardNotFound := errorOf(t, err, payments.CodeNotFound).Message
	_, err = del(a.PlatformID, uuid.New(), adas.CardID)
	userNotFound := errorOf(t, err, payments.CodeNotFound).Message

	// Foreign cards and users answer as unknown ones, and the card stays.
	for _, tc := range []struct {
		name                 string
		platform, user, card uuid.UUID
		wantMsg              string
	}{
		{"ErrCardOfOtherUser", a.PlatformID, ada.UserID, bobs.CardID, cardNotFound},
		{"ErrCardOfOtherPlatformsUser", a.PlatformID, ada.UserID, eves.CardID, cardNotFound},
		{"ErrUserOfOtherPlatform", a.PlatformID, eve.UserID, eves.CardID, userNotFound},
		{"ErrOtherPlatformDeletingOurCard", b.PlatformID, ada.UserID, adas.CardID, userNotFound},
		{"ErrOwnUserOtherPlatformsCard", b.PlatformID, eve.UserID, adas.CardID, cardNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := del(tc.platform, tc.user, tc.card)
			if e := errorOf(t, err, payments.CodeNotFound); e.Message != tc.wantMsg {
				t.Errorf("message %q, want %q: a foreign id answers unlike an unknown one", e.Message, tc.wantMsg)
			}
			if at := deletedAt(tc.card); at != "<null>" {
				t.Errorf("the card was deleted at %s", at)
			}
		})
	}

	t.Run("OK", func(t *testing.T) {
		setNow(time.Date(2026, 6, 2, 8, 0, 0, 0, time.UTC))
		got, err := del(a.PlatformID, ada.UserID, adas.CardID)
		if err != nil {
			t.Fatal(err)
		}
		want := object{"card_id": adas.CardID.String(), "deleted": true}
		if g, w := canonicalJSON(t, got), canonicalJSON(t, want); g != w {
			t.Errorf("got %s, want %s", g, w)
		}
		// Soft delete: the row is kept, marked with the time.
		if at := deletedAt(adas.CardID); !strings.HasPrefix(at, "2026-06-02T08:00:00") {
			t.Errorf("deleted_at = %s, want the clock's time", at)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM cards WHERE user_id = $1`, ada.UserID.String()); n != 1 {
			t.Errorf("%d card rows for the user, want 1 (kept)", n)
		}
	})
	t.Run("ErrDeletedTwice", func(t *testing.T) {
		before := deletedAt(adas.CardID)
		setNow(time.Date(2026, 6, 3, 8, 0, 0, 0, time.UTC))
		_, err := del(a.PlatformID, ada.UserID, adas.CardID)
		if e := errorOf(t, err, payments.CodeNotFound); e.Message != cardNotFound {
			t.Errorf("message %q, want %q as for an unknown card", e.Message, cardNotFound)
		}
		if at := deletedAt(adas.CardID); at != before {
			t.Errorf("deleted_at moved from %s to %s", before, at)
		}
	})
	t.Run("OKOtherIDForms", func(t *testing.T) {
		c := mustCard(t, svc, ada.UserID)
		got, err := svc.DeleteCard(ctx, a.PlatformID, strings.ToUpper(ada.UserID.String()),
			payments.CardDeletion{CardID: strings.ReplaceAll(c.CardID.String(), "-", "")})
		if err != nil {
			t.Fatal(err)
		}
		if got.CardID != c.CardID || !got.Deleted {
			t.Errorf("got %+v, want the canonical card id", got)
		}
	})

	bad := "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `x` at 1"
	for _, tc := range []struct {
		name   string
		userID string
		cardID string
		want   fieldErrors
	}{
		{"ErrCardIDMalformed", ada.UserID.String(), "xyz", fieldErrors{uuidParsing(bad, "xyz", "body", "card_id")}},
		{"ErrUserIDMalformed", "xyz", bobs.CardID.String(), fieldErrors{uuidParsing(bad, "xyz", "path", "user_id")}},
		{"ErrBoth", "xyz", "xyz", fieldErrors{
			uuidParsing(bad, "xyz", "path", "user_id"),
			uuidParsing(bad, "xyz", "body", "card_id"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.DeleteCard(ctx, a.PlatformID, tc.userID, payments.CardDeletion{CardID: tc.cardID})
			assertFields(t, err, tc.want)
		})
	}
	if at := deletedAt(bobs.CardID); at != "<null>" {
		t.Errorf("Bob's card was deleted at %s", at)
	}
}

// The Delete Card body as a client sends it.
func TestDecode_CardsDelete(t *testing.T) {
	id := uuid.NewString()
	req := func(s string) payments.Request {
		r := body(s)
		r.Path = map[string]string{"user_id": id}
		return r
	}
	runDecodeCases(t, "cards_delete", []decodeCase{
		{"OK", req(`{"card_id":"` + id + `"}`), nil},
		{"ErrCardIDMissing", req(`{}`), fieldErrors{missing(object{}, "body", "card_id")}},
		{"ErrCardIDNotString", req(`{"card_id":42}`), fieldErrors{stringType(42, "body", "card_id")}},
		{"ErrExtraField", req(`{"card_id":"` + id + `","force":true}`), fieldErrors{extra(true, "body", "force")}},
		{"ErrBodyMissing", payments.Request{Path: map[string]string{"user_id": id}}, fieldErrors{missing(nil, "body")}},
	})
}

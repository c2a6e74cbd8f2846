package payments_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Payees: created through the user-API by the key's user (CONTRACT.md sections 1 and 4),
// renamed by the platform (section 5: 404 unless the payee is the path user's and that
// user the caller's).

// mustCaller issues an API key for the user and authenticates with it, as the user-API
// route does, returning the caller a request with that key acts for.
func mustCaller(tb testing.TB, svc *payments.Service, userID uuid.UUID) payments.Caller {
	tb.Helper()
	ctx := context.Background()
	key, err := svc.CreateAPIKey(ctx, userID.String())
	if err != nil {
		tb.Fatalf("create API key: %v", err)
	}
	caller, err := svc.AuthenticateAPIKey(ctx, key.APIKey.String(), key.APISecret)
	if err != nil {
		tb.Fatalf("authenticate API key: %v", err)
	}
	return caller
}

// mustPayee creates a payee of the caller's user.
func mustPayee(tb testing.TB, svc *payments.Service, caller payments.Caller, name string) payments.Payee {
	tb.Helper()
	p, err := svc.CreatePayee(context.Background(), caller, payments.NewPayee{Name: name})
	if err != nil {
		tb.Fatalf("create payee %s: %v", name, err)
	}
	return p
}

func TestCreatePayee(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	now, _ := fixedClock(time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC))
	svc := mustOpenFile(t, path, payments.Options{Now: now})
	db := rawDB(t, path)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	caller := mustCaller(t, svc, u.UserID)

	t.Run("OK", func(t *testing.T) {
		in := payments.NewPayee{Name: "Priya Patel", Email: ptr("priya@example.com"), PhoneCountryCode: ptr("+91"), Phone: ptr("9876543210")}
		got, err := svc.CreatePayee(ctx, caller, in)
		if err != nil {
			t.Fatal(err)
		}
		want := payments.Payee{PayeeID: got.PayeeID, Name: in.Name, Email: in.Email, PhoneCountryCode: in.PhoneCountryCode,
			Phone: in.Phone, CreatedAt: now()}
		if canonicalJSON(t, got) != canonicalJSON(t, want) {
			t.Errorf("payee = %s, want %s", canonicalJSON(t, got), canonicalJSON(t, want))
		}
		if got.PayeeID == uuid.Nil || !canonicalUUID.MatchString(got.PayeeID.String()) {
			t.Errorf("payee_id = %q, not a canonical UUID", got.PayeeID)
		}
		// The payee belongs to the key's user.
		var owner string
		if err := db.QueryRow(`SELECT user_id FROM payees WHERE id = $1`, got.PayeeID.String()).Scan(&owner); err != nil {
			t.Fatal(err)
		}
		if owner != u.UserID.String() {
			t.Errorf("payee stored for user %s, want the key's user %s", owner, u.UserID)
		}
	})

	// No contact is required of a payee; a phone goes with its country code.
	for _, tc := range []struct {
		name string
		in   payments.NewPayee
	}{
		{"OKNoContact", payments.NewPayee{Name: "Hermit"}},
		{"OKEmailOnly", payments.NewPayee{Name: "Priya", Email: ptr("priya@example.com")}},
		{"OKPhoneOnly", payments.NewPayee{Name: "Priya", PhoneCountryCode: ptr("+91"), Phone: ptr("9876543210")}},
		{"OKName50", payments.NewPayee{Name: strings.Repeat("é", 50)}}, // 50 characters, 100 bytes
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := svc.CreatePayee(ctx, caller, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tc.in.Name || canonicalJSON(t, got.Email) != canonicalJSON(t, tc.in.Email) ||
				canonicalJSON(t, got.Phone) != canonicalJSON(t, tc.in.Phone) {
				t.Errorf("payee = %+v, want the fields of %+v", got, tc.in)
			}
		})
	}

	// Null means absent, as in the FastAPI service: stored NULL and answered null, and a
	// contact rule failure shows the body as the client sent it, nulls included.
	for _, tc := range []struct {
		name, raw string
		want      fieldErrors // nil: created
	}{
		{"OKAllNull", `{"name":"Hermit","email":null,"phone_country_code":null,"phone":null}`, nil},
		{"OKEmailWithNullPhone", `{"name":"Priya","email":"priya@example.com","phone_country_code":null,"phone":null}`, nil},
		{"OKPhoneWithNullEmail", `{"name":"Priya","email":null,"phone_country_code":"+91","phone":"9876543210"}`, nil},
		{"ErrPhoneWithNullCode", `{"name":"Priya","phone":"9876543210","phone_country_code":null}`,
			fieldErrors{ruleValueErr(object{"name": "Priya", "phone": "9876543210", "phone_country_code": nil}, "body")}},
		{"ErrCodeWithNullPhone", `{"name":"Priya","phone":null,"phone_country_code":"+91"}`,
			fieldErrors{ruleValueErr(object{"name": "Priya", "phone": nil, "phone_country_code": "+91"}, "body")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in payments.NewPayee
			err := svc.Decode("payees_create", body(tc.raw), &in) // the rules are the schema's
			if tc.want != nil {
				assertRuleFields(t, err, tc.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := svc.CreatePayee(ctx, caller, in)
			if err != nil {
				t.Fatal(err)
			}
			var sent map[string]*string
			if err := json.Unmarshal([]byte(tc.raw), &sent); err != nil {
				t.Fatal(err)
			}
			if canonicalJSON(t, got.Email) != canonicalJSON(t, sent["email"]) || canonicalJSON(t, got.Phone) != canonicalJSON(t, sent["phone"]) ||
				canonicalJSON(t, got.PhoneCountryCode) != canonicalJSON(t, sent["phone_country_code"]) {
				t.Errorf("payee = %s, want the contact of %s", canonicalJSON(t, got), tc.raw)
			}
			var email, code, phone sql.NullString
			if err := db.QueryRow(`SELECT email, phone_country_code, phone FROM payees WHERE id = $1`, got.PayeeID.String()).
				Scan(&email, &code, &phone); err != nil {
				t.Fatal(err)
			}
			if email.Valid != (got.Email != nil) || code.Valid != (got.PhoneCountryCode != nil) || phone.Valid != (got.Phone != nil) {
				t.Errorf("stored %v %v %v for %s", email, code, phone, tc.raw)
			}
		})
	}

	long := strings.Repeat("é", 51)
	for _, tc := range []struct {
		name string
		in   payments.NewPayee
		want fieldErrors
	}{
		{"ErrNameEmpty", payments.NewPayee{Name: ""}, fieldErrors{tooShort(1, "", "body", "name")}},
		{"ErrNameTooLong", payments.NewPayee{Name: long}, fieldErrors{tooLong(50, long, "body", "name")}},
		{"ErrEmailFormat", payments.NewPayee{Name: "Priya", Email: ptr("priya.example.com")},
			fieldErrors{emailError("An email address must have an @-sign.", "priya.example.com", "body", "email")}},
		{"ErrEmailEmpty", payments.NewPayee{Name: "Priya", Email: ptr("")}, fieldErrors{tooShort(1, "", "body", "email")}},
		{"ErrPhoneFormat", payments.NewPayee{Name: "Priya", PhoneCountryCode: ptr("+91"), Phone: ptr("98765-43210")},
			fieldErrors{patternMismatch("^[0-9]+$", "98765-43210", "body", "phone")}},
		{"ErrPhoneCountryCodeFormat", payments.NewPayee{Name: "Priya", PhoneCountryCode: ptr("91"), Phone: ptr("9876543210")},
			fieldErrors{patternMismatch(`^\+[0-9]{1,4}$`, "91", "body", "phone_country_code")}},
		{"ErrPhoneTooLong", payments.NewPayee{Name: "Priya", PhoneCountryCode: ptr("+91"), Phone: ptr("1234567890123456")},
			fieldErrors{tooLong(15, "1234567890123456", "body", "phone")}},
		{"ErrPhoneCountryCodeTooLong", payments.NewPayee{Name: "Priya", PhoneCountryCode: ptr("+12345"), Phone: ptr("1")},
			fieldErrors{tooLong(5, "+12345", "body", "phone_country_code")}},
		{"ErrSeveral", payments.NewPayee{Name: "", Email: ptr("nope"), PhoneCountryCode: ptr("1"), Phone: ptr("x")},
			fieldErrors{
				tooShort(1, "", "body", "name"),
				emailError("An email address must have an @-sign.", "nope", "body", "email"),
				patternMismatch(`^\+[0-9]{1,4}$`, "1", "body", "phone_country_code"),
				patternMismatch("^[0-9]+$", "x", "body", "phone"),
			}},
		// The contact rule runs after the schema, on the body as a whole.
		{"ErrPhoneWithoutCode", payments.NewPayee{Name: "Priya", Phone: ptr("9876543210")},
			fieldErrors{ruleValueErr(object{"name": "Priya", "phone": "9876543210"}, "body")}},
		{"ErrCodeWithoutPhone", payments.NewPayee{Name: "Priya", Email: ptr("priya@example.com"), PhoneCountryCode: ptr("+91")},
			fieldErrors{ruleValueErr(object{"name": "Priya", "email": "priya@example.com", "phone_country_code": "+91"}, "body")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := queryInt(t, db, `SELECT count(*) FROM payees`)
			_, err := svc.CreatePayee(ctx, caller, tc.in)
			assertRuleFields(t, err, tc.want)
			if after := queryInt(t, db, `SELECT count(*) FROM payees`); after != before {
				t.Errorf("a refused payee was stored: %d payees, had %d", after, before)
			}
		})
	}
}

func TestUpdatePayee(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	now, setNow := fixedClock(time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC))
	svc := mustOpenFile(t, path, payments.Options{Now: now})
	db := rawDB(t, path)

	// Platform A: Ada with a payee, Bob (same platform) with a payee.
	a := mustPlatform(t, svc)
	ada := mustUser(t, svc, a.PlatformID, "Ada", "ada@example.com")
	adaCaller := mustCaller(t, svc, ada.UserID)
	adaPayee, err := svc.CreatePayee(ctx, adaCaller, payments.NewPayee{Name: "Priya", Email: ptr("priya@example.com"),
		PhoneCountryCode: ptr("+91"), Phone: ptr("9876543210")})
	if err != nil {
		t.Fatal(err)
	}
	bob := mustUser(t, svc, a.PlatformID, "Bob", "bob@example.com")
	bobPayee := mustPayee(t, svc, mustCaller(t, svc, bob.UserID), "Bob's payee")
	// Platform B: Eve with a payee.
	b := mustPlatform(t, svc)
	eve := mustUser(t, svc, b.PlatformID, "Eve", "eve@example.com")
	evePayee := mustPayee(t, svc, mustCaller(t, svc, eve.UserID), "Eve's payee")

	nameOf := func(id uuid.UUID) string {
		var name string
		if err := db.QueryRow(`SELECT name FROM payees WHERE id = $1`, id.String()).Scan(&name); err != nil {
			t.Fatal(err)
		}
		return name
	}

	t.Run("OK", func(t *testing.T) {
		setNow(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
		got, err := svc.UpdatePayee(ctx, a.PlatformID, ada.UserID.String(),
			payments.PayeeRename{PayeeID: adaPayee.PayeeID.String(), Name: "Priya Sharma"})
		if err != nil {
			t.Fatal(err)
		}
		want := adaPayee
		want.Name = "Priya Sharma"
		if canonicalJSON(t, got) != canonicalJSON(t, want) {
			t.Errorf("payee = %s, want %s (only the name changes)", canonicalJSON(t, got), canonicalJSON(t, want))
		}
		if n := nameOf(adaPayee.PayeeID); n != "Priya Sharma" {
			t.Errorf("stored name %q, want the new one", n)
		}
		var updated sql.NullString
		if err := db.QueryRow(`SELECT updated_at FROM payees WHERE id = $1`, adaPayee.PayeeID.String()).Scan(&updated); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(updated.String, "2026-04-02T10:00:00") {
			t.Errorf("updated_at = %+v, want the clock's time", updated)
		}
	})

	t.Run("OKOtherIDForms", func(t *testing.T) {
		got, err := svc.UpdatePayee(ctx, a.PlatformID, strings.ToUpper(ada.UserID.String()),
			payments.PayeeRename{PayeeID: strings.ReplaceAll(adaPayee.PayeeID.String(), "-", ""), Name: "Priya S."})
		if err != nil {
			t.Fatal(err)
		}
		if got.PayeeID != adaPayee.PayeeID || got.Name != "Priya S." {
			t.Errorf("payee = %+v", got)
		}
	})

	// Every foreign id answers as an unknown one, and changes nothing.
	_, err = svc.UpdatePayee(ctx, a.PlatformID, ada.UserID.String(), payments.PayeeRename{PayeeID: uuid.NewString(), Name: "X"})
	payeeNotFound := errorOf(t, err, payments.CodeNotFound).Message
	_, err = svc.UpdatePayee(ctx, a.PlatformID, uuid.NewString(), payments.PayeeRename{PayeeID: adaPayee.PayeeID.String(), Name: "X"})
	userNotFound := errorOf(t, err, payments.CodeNotFound).Message
	for _, tc := range []struct {
		name     string
		platform uuid.UUID
		userID   uuid.UUID
		payeeID  uuid.UUID
		wantMsg  string
	}{
		{"ErrPayeeOfOtherUser", a.PlatformID, ada.UserID, bobPayee.PayeeID, payeeNotFound},
		{"ErrPayeeOfOtherPlatformsUser", a.PlatformID, ada.UserID, evePayee.PayeeID, payeeNotFound},
		{"ErrUserOfOtherPlatform", a.PlatformID, eve.UserID, evePayee.PayeeID, userNotFound},
		{"ErrOtherPlatformRenamingOurPayee", b.PlatformID, ada.UserID, adaPayee.PayeeID, userNotFound},
		{"ErrOwnUserOtherPlatformsPayee", b.PlatformID, eve.UserID, adaPayee.PayeeID, payeeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := nameOf(tc.payeeID)
			_, err := svc.UpdatePayee(ctx, tc.platform, tc.userID.String(), payments.PayeeRename{PayeeID: tc.payeeID.String(), Name: "Hijacked"})
			if e := errorOf(t, err, payments.CodeNotFound); e.Message != tc.wantMsg {
				t.Errorf("message %q, want %q: a foreign id answers unlike an unknown one", e.Message, tc.wantMsg)
			}
			if after := nameOf(tc.payeeID); after != before {
				t.Errorf("payee renamed from %q to %q", before, after)
			}
		})
	}
	t.Run("ErrUnknownPayee", func(t *testing.T) {
		_, err := svc.UpdatePayee(ctx, a.PlatformID, ada.UserID.String(), payments.PayeeRename{PayeeID: uuid.NewString(), Name: "X"})
		errorOf(t, err, payments.CodeNotFound)
	})
	t.Run("ErrUnknownUser", func(t *testing.T) {
		_, err := svc.UpdatePayee(ctx, a.PlatformID, uuid.NewString(), payments.PayeeRename{PayeeID: adaPayee.PayeeID.String(), Name: "X"})
		errorOf(t, err, payments.CodeNotFound)
	})

	badUUID := "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1"
	long := strings.Repeat("x", 51)
	for _, tc := range []struct {
		name   string
		userID string
		in     payments.PayeeRename
		want   fieldErrors
	}{
		{"ErrNameEmpty", ada.UserID.String(), payments.PayeeRename{PayeeID: adaPayee.PayeeID.String(), Name: ""},
			fieldErrors{tooShort(1, "", "body", "name")}},
		{"ErrNameTooLong", ada.UserID.String(), payments.PayeeRename{PayeeID: adaPayee.PayeeID.String(), Name: long},
			fieldErrors{tooLong(50, long, "body", "name")}},
		{"ErrPayeeIDMalformed", ada.UserID.String(), payments.PayeeRename{PayeeID: "nope", Name: "X"},
			fieldErrors{uuidParsing(badUUID, "nope", "body", "payee_id")}},
		{"ErrUserIDMalformed", "nope", payments.PayeeRename{PayeeID: adaPayee.PayeeID.String(), Name: "X"},
			fieldErrors{uuidParsing(badUUID, "nope", "path", "user_id")}},
		// Path entries come first, then the body's in declaration order (payee_id, name).
		{"ErrPathAndBody", "nope", payments.PayeeRename{PayeeID: "nope", Name: ""},
			fieldErrors{
				uuidParsing(badUUID, "nope", "path", "user_id"),
				uuidParsing(badUUID, "nope", "body", "payee_id"),
				tooShort(1, "", "body", "name"),
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.UpdatePayee(ctx, a.PlatformID, tc.userID, tc.in)
			assertFields(t, err, tc.want)
		})
	}
}

// ruleValueErr is the entry of a rule beyond JSON Schema (a checksum, the contact rule):
// a value_error whose message is "Value error, " and our own words. assertRuleFields
// accepts any such message for it.
func ruleValueErr(input any, l ...any) payments.FieldError {
	return payments.FieldError{Type: "value_error", Loc: l, Msg: "Value error, " + anyText, Input: input,
		Ctx: object{"error": object{}}}
}

// assertRuleFields is assertFields where an expected "Value error, <any text>" message
// matches "Value error, " followed by any explanation.
func assertRuleFields(t *testing.T, err error, want fieldErrors) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", canonicalJSON(t, want))
	}
	e := errorOf(t, err, payments.CodeInvalid)
	for i := range e.Fields {
		if i < len(want) && want[i].Msg == "Value error, "+anyText {
			if why, ok := strings.CutPrefix(e.Fields[i].Msg, "Value error, "); ok && why != "" {
				e.Fields[i].Msg = want[i].Msg
			}
		}
	}
	assertFields(t, err, want)
}

package payments_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/platform-payments/payments"
)

// Each request is validated once.

// Each request is validated once: over HTTP by DecodeValue (the operation given the value
// it decoded with Validated, for the same path, trusts it), from Go by the operation
// itself. A decoded value is plain data: without Validated, it is validated as one built
// in Go.
func TestValidateOnce(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	count := func(f func()) int64 {
		before := payments.Validations(svc)
		f()
		return payments.Validations(svc) - before
	}

	if n := count(func() {
		var in payments.NewUser
		v, err := svc.DecodeValue(body(`{"name":"Bob","email":"bob@example.com"}`), &in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CreateUser(ctx, p.PlatformID, in, payments.Validated(v)); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("decoded and created as validated: %d validations, want 1", n)
	}
	if n := count(func() {
		var in payments.NewUser
		if _, err := svc.DecodeValue(body(`{"name":"Dan","email":"dan@example.com"}`), &in); err != nil {
			t.Fatal(err)
		}
		if in != (payments.NewUser{Name: "Dan", Email: in.Email}) || *in.Email != "dan@example.com" {
			t.Errorf("decoded %+v", in)
		}
		if _, err := svc.CreateUser(ctx, p.PlatformID, in); err != nil {
			t.Fatal(err)
		}
	}); n != 2 {
		t.Errorf("decoded, then created without Validated: %d validations, want 2 (the value carries nothing)", n)
	}
	if n := count(func() {
		if _, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Carol", Email: ptr("carol@example.com")}, payments.Validated(nil)); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("a Go caller's create: %d validations, want 1", n)
	}
	if n := count(func() {
		if _, err := svc.GetUser(ctx, p.PlatformID, u.UserID.String()); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("get: %d validations, want 1", n)
	}

	// What the operation is given other than what was decoded is validated: what was
	// validated is not what runs.
	req := payments.Request{Path: map[string]string{"user_id": u.UserID.String()}, Body: []byte(`{"card_id":"7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41"}`)}
	var del payments.CardDeletion
	v, err := svc.DecodeValue(req, &del)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(func() {
		_, err := svc.DeleteCard(ctx, p.PlatformID, "not-a-uuid", del, payments.Validated(v))
		errorOf(t, err, payments.CodeInvalid)
	}); n != 1 {
		t.Errorf("decoded for another path: %d validations, want 1 (by the operation)", n)
	}
	if n := count(func() {
		_, err := svc.DeleteCard(ctx, p.PlatformID, u.UserID.String(), payments.CardDeletion{CardID: "not-a-card"}, payments.Validated(v))
		errorOf(t, err, payments.CodeInvalid)
	}); n != 1 {
		t.Errorf("another value than decoded: %d validations, want 1 (by the operation)", n)
	}
	var user payments.NewUser
	v, err = svc.DecodeValue(body(`{"name":"Eve","email":"eve@example.com"}`), &user)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(func() {
		// A payee of the same fields: another schema, which the user's validation is not.
		payee := payments.NewPayee{Name: user.Name, Email: user.Email}
		_, err := svc.CreatePayee(ctx, mustCaller(t, svc, u.UserID), payee, payments.Validated(v))
		if err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("decoded for another operation: %d validations, want 1 (by the operation)", n)
	}
	*user.Email = "not an email" // changed through the pointer the decoded value holds
	if n := count(func() {
		_, err := svc.CreateUser(ctx, p.PlatformID, user, payments.Validated(v))
		errorOf(t, err, payments.CodeInvalid)
	}); n != 1 {
		t.Errorf("a decoded value changed since: %d validations, want 1 (by the operation)", n)
	}

	for _, dst := range []any{&struct{}{}, payments.NewUser{}, (*payments.NewUser)(nil), nil} {
		if _, err := svc.DecodeValue(body(`{"name":"Bob","email":"bob@example.com"}`), dst); err == nil {
			t.Errorf("DecodeValue into %T, which is not a pointer to a request value of the API, succeeded", dst)
		}
	}
}

// The query operations validate once too: the request as sent when given it (AsSent, as
// the HTTP server calls them), so that a parameter left out is "missing" and one sent
// empty is too short; otherwise their arguments.
func TestValidateOnceQuery(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	sent := func(query map[string]string) payments.Call {
		return payments.AsSent(payments.Request{Query: query})
	}
	sentFor := func(userID string, query map[string]string) payments.Call {
		return payments.AsSent(payments.Request{Path: map[string]string{"user_id": userID}, Query: query})
	}
	firstType := func(err error) string {
		if err == nil {
			return ""
		}
		return errorOf(t, err, payments.CodeInvalid).Fields[0].Type
	}
	for _, c := range []struct {
		name string
		run  func() error
		want string // the type of the first 422 entry; "" for none
	}{
		{"rules as sent", func() error {
			_, err := svc.GetPayeeRules(ctx, "IN", "INR", sent(map[string]string{"country_code": "IN", "payout_currency": "INR"}))
			return err
		}, ""},
		{"rules left out", func() error {
			_, err := svc.GetPayeeRules(ctx, "", "INR", sent(map[string]string{"payout_currency": "INR"}))
			return err
		}, "missing"},
		{"rules sent empty", func() error {
			_, err := svc.GetPayeeRules(ctx, "", "INR", sent(map[string]string{"country_code": "", "payout_currency": "INR"}))
			return err
		}, "string_too_short"},
		{"rules from Go", func() error {
			_, err := svc.GetPayeeRules(ctx, "", "INR")
			return err
		}, "string_too_short"},
		{"rules with another request", func() error { // the arguments are what runs, and what is validated
			_, err := svc.GetPayeeRules(ctx, "IN", "INR", sent(map[string]string{"payout_currency": "INR"}))
			return err
		}, ""},
		{"rates left out", func() error {
			_, err := svc.ExchangeRates(ctx, "", sent(nil))
			return err
		}, "missing"},
		{"addresses without payee", func() error {
			_, err := svc.ListPayeeAddresses(ctx, p.PlatformID, u.UserID.String(), "", sentFor(u.UserID.String(), nil))
			return err
		}, ""},
		{"addresses with payee sent empty", func() error {
			_, err := svc.ListPayeeAddresses(ctx, p.PlatformID, u.UserID.String(), "", sentFor(u.UserID.String(), map[string]string{"payee_id": ""}))
			return err
		}, "uuid_parsing"},
		{"addresses for another user than sent", func() error { // the arguments are validated
			_, err := svc.ListPayeeAddresses(ctx, p.PlatformID, u.UserID.String(), "", sentFor("not-a-uuid", map[string]string{"payee_id": ""}))
			return err
		}, ""},
		{"addresses from Go without payee", func() error {
			_, err := svc.ListPayeeAddresses(ctx, p.PlatformID, u.UserID.String(), "")
			return err
		}, ""},
		{"a scope with a body", func() error { // a request with a body is no query's
			_, err := svc.GetPayeeRules(ctx, "", "INR", payments.AsSent(payments.Request{Query: map[string]string{"payout_currency": "INR"}, Body: []byte("{}")}))
			return err
		}, "string_too_short"},
		{"rules left out, the last request given", func() error {
			_, err := svc.GetPayeeRules(ctx, "", "INR", sent(map[string]string{"country_code": "", "payout_currency": "INR"}),
				sent(map[string]string{"payout_currency": "INR"}))
			return err
		}, "missing"},
		{"events with a limit sent empty", func() error {
			_, err := svc.ListEvents(ctx, p.PlatformID, payments.EventQuery{}, sent(map[string]string{"limit": ""}))
			return err
		}, "string_pattern_mismatch"},
		{"events from Go without a limit", func() error {
			_, err := svc.ListEvents(ctx, p.PlatformID, payments.EventQuery{})
			return err
		}, ""},
	} {
		before := payments.Validations(svc)
		got := firstType(c.run())
		if n := payments.Validations(svc) - before; n != 1 {
			t.Errorf("%s: %d validations, want 1", c.name, n)
		}
		if got != c.want {
			t.Errorf("%s: first 422 entry %q, want %q", c.name, got, c.want)
		}
	}
}

// A request value is plain data, which Decoded copies to tell whether the value an
// operation is given is still the one it validated: exported fields of strings, numbers
// and booleans, or pointers to them.
func TestRequestValuesArePlainData(t *testing.T) {
	for _, v := range []any{payments.NewUser{}, payments.ListUsersParams{}, payments.NewPayee{}, payments.PayeeRename{},
		payments.CardDeletion{}, payments.NewBankAccount{}, payments.NewPayeeBank{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			f := typ.Field(i)
			kind := f.Type.Kind()
			if kind == reflect.Pointer {
				kind = f.Type.Elem().Kind()
			}
			if !f.IsExported() || !slices.Contains([]reflect.Kind{reflect.String, reflect.Int, reflect.Bool}, kind) {
				t.Errorf("%s.%s is %s: not plain data", typ.Name(), f.Name, f.Type)
			}
		}
	}
}

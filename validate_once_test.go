package payments_test

import (
	"context"
	"testing"

	"github.com/platform-payments/payments"
)

// Each request is validated once.

// Each request is validated once: over HTTP by DecodeRequest (its operation trusts the
// value it decoded, for the same path), from Go by the operation itself.
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
		if err := svc.DecodeRequest(body(`{"name":"Bob","email":"bob@example.com"}`), &in); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CreateUser(ctx, p.PlatformID, in); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("decoded and created: %d validations, want 1", n)
	}
	if n := count(func() {
		if _, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Carol", Email: ptr("carol@example.com")}); err != nil {
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
	// A decoded value passed with other path parameters than it was decoded with is
	// validated again: what was validated is not what runs.
	req := payments.Request{Path: map[string]string{"user_id": u.UserID.String()}, Body: []byte(`{"card_id":"7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41"}`)}
	var del payments.CardDeletion
	if err := svc.DecodeRequest(req, &del); err != nil {
		t.Fatal(err)
	}
	if n := count(func() {
		_, err := svc.DeleteCard(ctx, p.PlatformID, "not-a-uuid", del)
		errorOf(t, err, payments.CodeInvalid)
	}); n != 1 {
		t.Errorf("decoded for another path: %d validations, want 1 (by the operation)", n)
	}
	if err := svc.DecodeRequest(req, &struct{}{}); err == nil {
		t.Error("DecodeRequest into a value that is not a request of the API succeeded")
	}
}

// The query operations validate once too: the request as sent when the context carries
// it (WithRequest, as the HTTP server does), so that a parameter left out is "missing"
// and one sent empty is too short; otherwise their arguments.
func TestValidateOnceQuery(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	sent := func(query map[string]string) context.Context {
		return payments.WithRequest(ctx, payments.Request{Query: query})
	}
	sentFor := func(userID string, query map[string]string) context.Context {
		return payments.WithRequest(ctx, payments.Request{Path: map[string]string{"user_id": userID}, Query: query})
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
			_, err := svc.GetPayeeRules(sent(map[string]string{"country_code": "IN", "payout_currency": "INR"}), "IN", "INR")
			return err
		}, ""},
		{"rules left out", func() error {
			_, err := svc.GetPayeeRules(sent(map[string]string{"payout_currency": "INR"}), "", "INR")
			return err
		}, "missing"},
		{"rules sent empty", func() error {
			_, err := svc.GetPayeeRules(sent(map[string]string{"country_code": "", "payout_currency": "INR"}), "", "INR")
			return err
		}, "string_too_short"},
		{"rules from Go", func() error {
			_, err := svc.GetPayeeRules(ctx, "", "INR")
			return err
		}, "string_too_short"},
		{"rules with another request", func() error { // the arguments are what runs, and what is validated
			_, err := svc.GetPayeeRules(sent(map[string]string{"payout_currency": "INR"}), "IN", "INR")
			return err
		}, ""},
		{"rates left out", func() error {
			_, err := svc.ExchangeRates(sent(nil), "")
			return err
		}, "missing"},
		{"addresses without payee", func() error {
			_, err := svc.ListPayeeAddresses(sentFor(u.UserID.String(), nil), p.PlatformID, u.UserID.String(), "")
			return err
		}, ""},
		{"addresses with payee sent empty", func() error {
			_, err := svc.ListPayeeAddresses(sentFor(u.UserID.String(), map[string]string{"payee_id": ""}), p.PlatformID, u.UserID.String(), "")
			return err
		}, "uuid_parsing"},
		{"addresses for another user than sent", func() error { // the arguments are validated
			_, err := svc.ListPayeeAddresses(sentFor("not-a-uuid", map[string]string{"payee_id": ""}), p.PlatformID, u.UserID.String(), "")
			return err
		}, ""},
		{"addresses from Go without payee", func() error {
			_, err := svc.ListPayeeAddresses(ctx, p.PlatformID, u.UserID.String(), "")
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

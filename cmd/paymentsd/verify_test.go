package main

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// user verify -fail records the event user.verification.failed with the reason, which
// no API route shows yet: read here through the library, on the database it wrote.
func TestUserVerifyFailRecordsEvent(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	r := runT(t, "", "platform", "create", "-db", db, "-name", "Acme")
	if r.code != 0 {
		t.Fatalf("platform create: %+v", r)
	}
	var p struct {
		PlatformID  uuid.UUID `json:"platform_id"`
		Secret      string    `json:"secret"`
		Environment string    `json:"environment"`
	}
	decodeLine(t, r.stdout, &p)

	svc, err := payments.Open(ctx, db, payments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: new("ada@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}

	r = runT(t, "", "user", "verify", "-db", db, "-fail", "-reason", "Document expired", u.UserID.String())
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("user verify -fail: %+v", r)
	}

	svc, err = payments.Open(ctx, db, payments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	page, err := svc.ListEvents(ctx, p.PlatformID, payments.EventQuery{Type: payments.EventUserVerificationFailed})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 {
		t.Fatalf("%d user.verification.failed events, want 1: %+v", len(page.Events), page.Events)
	}
	ev := page.Events[0]
	if ev.Data.Reason != "Document expired" || ev.Data.Object.ID != u.UserID.String() {
		t.Errorf("the event says %+v, want the reason and the user %s", ev.Data, u.UserID)
	}
}

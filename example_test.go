package payments_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/webhook"
)

// Embedding the service: open a store, register a platform, create and list its users.
// The clock and the id generator are injected here only to make the output repeatable;
// leave them out to get the real time and random UUIDs.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "payments-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	var n byte
	svc, err := payments.Open(ctx, filepath.Join(dir, "payments.db"), payments.Options{
		Now:   func() time.Time { return time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC) },
		NewID: func() uuid.UUID { n++; return uuid.UUID{15: n} },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()

	platform, err := svc.CreatePlatform(ctx, "Acme Payroll", payments.Sandbox)
	if err != nil {
		log.Fatal(err)
	}
	// Made idempotent where the call is written: sent again under the same key (a retry
	// after a timeout), the call returns the same user and creates none.
	email := "ada@example.com"
	ada := payments.NewUser{Name: "Ada Lovelace", Email: &email}
	if _, err := svc.CreateUser(ctx, platform.PlatformID, ada, payments.WithKey(&payments.Idempotency{Key: "create-ada"})); err != nil {
		log.Fatal(err)
	}

	page, err := svc.ListUsers(ctx, platform.PlatformID, payments.ListUsersParams{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("platform:", platform.PlatformID)
	fmt.Println("users:", page.TotalRecords)
	for _, u := range page.Records {
		out, _ := json.Marshal(u)
		fmt.Println(string(out))
	}
	// Output:
	// platform: 00000000-0000-0000-0000-000000000001
	// users: 1
	// {"pw_id":1,"user_id":"00000000-0000-0000-0000-000000000002","name":"Ada Lovelace","email":"ada@example.com","phone_country_code":null,"phone":null,"created_at":"2026-01-02T15:04:05Z"}
}

// A retry of a create under its idempotency key returns what the first call returned, and
// creates nothing; the same key with another request is refused. The call reports in idem
// whether the outcome was replayed. A call without the option runs without a key.
func ExampleWithKey() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "payments-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	svc, err := payments.Open(ctx, filepath.Join(dir, "payments.db"), payments.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	platform, err := svc.CreatePlatform(ctx, "Acme Payroll", payments.Sandbox)
	if err != nil {
		log.Fatal(err)
	}
	email := "ada@example.com"
	ada := payments.NewUser{Name: "Ada Lovelace", Email: &email}

	idem := &payments.Idempotency{Key: "create-ada"}
	first, err := svc.CreateUser(ctx, platform.PlatformID, ada, payments.WithKey(idem))
	fmt.Println("first:", err, idem.Replayed)

	retry := &payments.Idempotency{Key: "create-ada"}
	again, err := svc.CreateUser(ctx, platform.PlatformID, ada, payments.WithKey(retry))
	fmt.Println("retry:", err, retry.Replayed, again.UserID == first.UserID)

	other := &payments.Idempotency{Key: "create-ada"}
	_, err = svc.CreateUser(ctx, platform.PlatformID, payments.NewUser{Name: "Bob", Email: &email}, payments.WithKey(other))
	fmt.Println("other request:", payments.ErrorCode(err), payments.ErrorMessage(err))

	_, err = svc.CreateUser(ctx, platform.PlatformID, ada)
	fmt.Println("without a key:", payments.ErrorCode(err), payments.ErrorMessage(err))
	// Output:
	// first: <nil> false
	// retry: <nil> true true
	// other request: invalid This Idempotency-Key was already used with a different request.
	// without a key: conflict A user with this email already exists.
}

// A receiver checks each delivery with VerifyWebhook before it trusts the body. Here the
// delivery is signed as the service signs one; an http.Header passes as it is.
func ExampleVerifyWebhook() {
	secret := webhook.NewSecret() // shown to the platform once, as secret.Text()
	body := []byte(`{"id":"0190a1b2-0000-7000-8000-000000000001","type":"user.created"}`)
	header := webhook.Headers("0190a1b2-0000-7000-8000-000000000001", time.Now(), body, secret)

	err := payments.VerifyWebhook(secret.Text(), header, body, 5*time.Minute)
	fmt.Println("delivery:", err)

	forged := []byte(`{"id":"0190a1b2-0000-7000-8000-000000000001","type":"user.deleted"}`)
	err = payments.VerifyWebhook(secret.Text(), header, forged, 5*time.Minute)
	fmt.Println("forged body:", errors.Is(err, payments.ErrWebhookSignature))

	replayed := webhook.Headers("0190a1b2-0000-7000-8000-000000000001", time.Now().Add(-time.Hour), body, secret)
	err = payments.VerifyWebhook(secret.Text(), replayed, body, 5*time.Minute)
	fmt.Println("an hour old:", errors.Is(err, payments.ErrWebhookTooOld))
	// Output:
	// delivery: <nil>
	// forged body: true
	// an hour old: true
}

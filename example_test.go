package payments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
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
	email := "ada@example.com"
	if _, err := svc.CreateUser(ctx, platform.PlatformID, payments.NewUser{Name: "Ada Lovelace", Email: &email}); err != nil {
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

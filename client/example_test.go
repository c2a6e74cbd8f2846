package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/client"
	"github.com/platform-payments/payments/httpserver"
)

// A platform creates a user, and a request that fails validation comes back as a
// *client.ValidationError. (The server here is the library's handler on a loopback port,
// over a SQLite file; against paymentsd serve, baseURL is its address.)
func ExampleNew() {
	dir, err := os.MkdirTemp("", "client-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	svc, err := payments.Open(ctx, filepath.Join(dir, "payments.db"), payments.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	platform, err := svc.CreatePlatform(ctx, "Acme", payments.Sandbox) // paymentsd platform create
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(httpserver.New(svc, nil))
	defer srv.Close()

	c, err := client.New(srv.URL, client.Platform(platform.PlatformID.String(), platform.Secret))
	if err != nil {
		log.Fatal(err)
	}
	email := client.Email("ada@example.com")
	user, err := c.CreateUser(client.WithIdempotencyKey(ctx, "create-ada"), client.CreateUserJSONRequestBody{
		Name: "Ada Lovelace", Email: &email,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(user.Name, *user.Email)

	_, err = c.CreateUser(ctx, client.CreateUserJSONRequestBody{Name: "Alan Turing"})
	var invalid *client.ValidationError
	if errors.As(err, &invalid) {
		fmt.Println(invalid.Detail[0].Msg)
	}
	_, err = c.GetUser(ctx, platform.PlatformID) // no user has that id
	var refused *client.Error
	if errors.As(err, &refused) {
		fmt.Println(refused.StatusCode, refused.Message)
	}
	// Output:
	// Ada Lovelace ada@example.com
	// Value error, at least one contact method is required: an email, or a phone with its phone_country_code
	// 404 User not found.
}

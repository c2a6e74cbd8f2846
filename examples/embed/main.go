// Embed is the README's complete program: the library over one SQLite file, a platform
// and a user made in Go, and the same service served over HTTP until Ctrl-C.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil)) // what httpserver logs to
	if err := run(ctx, logger); err != nil {
		logger.Error(err.Error())
		os.Exit(1)
	}
}

func run(ctx context.Context, logger *slog.Logger) error {
	svc, err := payments.Open(ctx, "payments.db", payments.Options{})
	if err != nil {
		return err
	}
	defer svc.Close()

	platform, err := svc.CreatePlatform(ctx, "Acme Payroll", payments.Sandbox)
	if err != nil {
		return err
	}
	email := "ada@example.com"
	if _, err := svc.CreateUser(ctx, platform.PlatformID, payments.NewUser{Name: "Ada Lovelace", Email: &email}); err != nil {
		// payments.ErrorCode(err) tells payments.CodeInvalid (err.(*payments.Error).Fields
		// holds the 422 entries), CodeConflict (the email is taken), ...
		return err
	}
	fmt.Printf("platform %s, secret %s\n", platform.PlatformID, platform.Secret)

	handler := httpserver.New(svc, logger) // an http.Handler with every route
	return httpserver.Run(ctx, handler, httpserver.Config{Addr: "127.0.0.1:8080", Logger: logger})
}

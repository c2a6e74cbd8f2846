package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
)

var serveCommand = &command{
	name:    "serve",
	summary: "Serve the Platform Payments API until interrupted (SIGINT or SIGTERM).",
	usage:   "[-db F] [-addr 127.0.0.1:8080] [-env sandbox|production] [-tls-cert FILE -tls-key FILE]",
	details: `The log is JSON on stderr; its "listening" line carries the bound address, so
-addr 127.0.0.1:0 picks a free port. A signal stops accepting connections and waits up to
20 seconds for the requests in flight; a second signal ends the program at once.`,
	run: runServe,
}

func runServe(ctx context.Context, inv *invocation, args []string) error {
	fs := inv.flagSet()
	db := storeFlags(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "listen on the TCP address `ADDR` (port 0 picks a free port)")
	env := envFlag(fs, "serve the environment `ENV`, sandbox or production; credentials of the other are refused")
	certFile := fs.String("tls-cert", "", "serve HTTPS with the certificate (PEM) in `FILE`; needs -tls-key")
	keyFile := fs.String("tls-key", "", "the private key (PEM) of -tls-cert, in `FILE`")
	if err := inv.parse(fs, args); err != nil {
		return err
	}
	if err := db.check(); err != nil {
		return err
	}
	if (*certFile == "") != (*keyFile == "") {
		return usagef("-tls-cert and -tls-key go together")
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *certFile != "" {
		// Run loads the pair only once it is listening: check it before saying so.
		if _, err := tls.LoadX509KeyPair(*certFile, *keyFile); err != nil {
			return fmt.Errorf("TLS certificate: %w", err)
		}
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // from now on a second signal has its default effect
	}()

	logger := slog.New(slog.NewJSONHandler(inv.stderr, nil))
	inv.logger = logger
	return inv.withService(ctx, db, *env, func(svc *payments.Service) error {
		has, err := svc.HasPlatforms(ctx)
		if err != nil {
			return err
		}
		if !has {
			hint := program + " platform create -db " + shellQuote(db.path)
			if *env != payments.Sandbox {
				hint += " -env " + string(*env)
			}
			hint += " -name NAME"
			logger.Warn("no platform in the database yet; create one with: "+hint, "db", db.path)
		}
		scheme := "http"
		if *certFile != "" {
			scheme = "https"
		}
		err = httpserver.Run(ctx, httpserver.New(svc, logger), httpserver.Config{
			Addr:     *addr,
			CertFile: *certFile,
			KeyFile:  *keyFile,
			Logger:   logger,
			Ready: func(a net.Addr) {
				logger.Info("listening", "addr", a.String(), "url", scheme+"://"+a.String(),
					"environment", string(*env), "db", db.path, "data_key_id", svc.DataKeyID())
			},
		})
		if err != nil {
			return err
		}
		logger.Info("stopped")
		return nil
	})
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it, so that a printed hint can be
// pasted as it is.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

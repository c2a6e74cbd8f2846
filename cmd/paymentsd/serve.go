package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/console"
	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/command"
)

var serveCommand = &command.Command{
	Name:    "serve",
	Summary: "Serve the Platform Payments API until interrupted (SIGINT or SIGTERM).",
	Usage:   "[-addr 127.0.0.1:8080] [-env sandbox|production] [-timestamp-tolerance 300s] [-idempotency-ttl 24h] [-tls-cert FILE -tls-key FILE] [-rate-limit R [-rate-burst B]] [-auth-failures 300] [-client-ip-header NAME] [-log-level info] [-log-format json|text] [-metrics-addr ADDR] [-db-max-conns N] [-data-key-file F] [-old-data-key-file F]... [-webhook-retry-schedule LIST] [-webhook-timeout 15s] [-webhook-workers 32] [-webhook-endpoint-concurrency 4] [-event-retention 30d] [-webhook-allow-cidr CIDR]... [-console-token TOKEN]",
	Details: `The log is JSON on stderr; its "listening" line carries the bound address, so
-addr 127.0.0.1:0 picks a free port. A signal stops accepting connections and waits up to
20 seconds for the requests in flight; a second signal ends the program at once.
-timestamp-tolerance is how far the X-Timestamp of a platform created with
-require-timestamp may be from the server's clock, either way: whole seconds, at least 1s.
-idempotency-ttl is how long an Idempotency-Key and its answer are remembered.

Limits: with -rate-limit, each platform, and each user-API key, may send -rate-limit
requests a second on average and -rate-burst at once; beyond, 429 with Retry-After, and
every authenticated answer carries RateLimit-Limit, RateLimit-Remaining and
RateLimit-Reset. There is no such limit by default. A client address that
fails authentication more than -auth-failures times a minute gets 429 before its
requests are authenticated; past as many failures for one platform id or API key, its
failures answer 429 and an address that failed for it is refused, while a request with
the right secret from any other address still passes. 0 turns a limit
off. Behind a reverse proxy, -client-ip-header names the header it writes the client's
address in; without it every client counts as the proxy's address.

Every flag may come from the environment instead (listed below): PAYMENTS_ and the flag's
name in capitals, dashes to underscores, as PAYMENTS_ADDR or PAYMENTS_RATE_LIMIT; a flag
given wins. An invalid value in a variable is a usage error naming it. The data key's own
PAYMENTS_DATA_KEY and PAYMENTS_OLD_DATA_KEYS keep their meaning (see -data-key-file).

GET /healthz, GET /readyz and GET /metrics (Prometheus) need no credentials. With
-metrics-addr, /metrics is served on that address alone (the API's answers 404).

The browser console is served under /console/ with -console-token (or
$PAYMENTS_CONSOLE_TOKEN); a server given none that listens on loopback only makes a
random token and logs, once, the address that logs in with it; beyond loopback it
serves no console without a token (docs/console.md).`,
	Uses:      command.UsesDatabase,
	EnvPrefix: "PAYMENTS_",
	Run:       runServe,
}

// serveGCPercent is the collector's GOGC while serving, unless $GOGC sets one: the
// server's live heap is a few megabytes, so at Go's default of 100 the collector would run
// dozens of times a second under load, each time for a heap of at most 4 MB; at 200 it runs
// half as often, for a few megabytes more (docs/decisions/storage.md).
const serveGCPercent = 200

func runServe(ctx context.Context, x *command.Invocation, args []string) error {
	fs := x.FlagSet()
	addr := fs.String("addr", "127.0.0.1:8080", "listen on the TCP address `ADDR` (port 0 picks a free port)")
	env := command.EnvFlag(fs, payments.Sandbox, "serve the environment `ENV`, sandbox or production; credentials of the other are refused")
	tolerance := fs.Duration("timestamp-tolerance", payments.DefaultTimestampTolerance,
		"accept a signed X-Timestamp at most `DURATION` from the server's clock (platforms created with -require-timestamp)")
	certFile := fs.String("tls-cert", "", "serve HTTPS with the certificate (PEM) in `FILE`; needs -tls-key")
	keyFile := fs.String("tls-key", "", "the private key (PEM) of -tls-cert, in `FILE`")
	idempotencyTTL := fs.Duration("idempotency-ttl", payments.DefaultIdempotencyTTL,
		"remember each Idempotency-Key and its answer for `DURATION`")
	limits := httpserver.LimitFlags(fs)
	logLevel := fs.String("log-level", "info", "log at `LEVEL` and above: debug, info, warn or error")
	logFormat := fs.String("log-format", "json", "log in `FORMAT`: json (one object a line) or text (key=value)")
	metricsAddr := fs.String("metrics-addr", "", "serve GET /metrics on the TCP address `ADDR` instead of the API's")
	dbConns := fs.Int("db-max-conns", 0, "on PostgreSQL, open at most `N` connections (0: 4 per core, at least 8); SQLite sizes its own pools")
	webhooks := dispatch.Flags(fs)
	consoleToken := fs.String("console-token", "", "serve the browser console under /console/, opened by the token `TOKEN` (see docs/console.md)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	h := hostOf(x)
	db := h.store
	opts, err := limits()
	if err != nil {
		return command.Usagef("%v", err)
	}
	dispatchOpts, err := webhooks()
	if err != nil {
		return command.Usagef("%v", err)
	}
	if (*certFile == "") != (*keyFile == "") {
		return command.Usagef("-tls-cert and -tls-key go together")
	}
	if *tolerance < time.Second || *tolerance%time.Second != 0 {
		return command.Usagef("-timestamp-tolerance %v: want whole seconds, at least 1s", *tolerance)
	}
	if err := command.NoArgs(fs); err != nil {
		return err
	}
	if *dbConns < 0 {
		return command.Usagef("-db-max-conns %d: want 0 (the default) or more", *dbConns)
	}
	newHandler, err := logHandler(*logLevel, *logFormat)
	if err != nil {
		return err
	}
	if *idempotencyTTL <= 0 {
		return command.Usagef("-idempotency-ttl must be positive")
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

	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serveGCPercent)
	}
	// The log's lines reach stderr through one goroutine (logWriter), off the requests' path.
	logOut := newLogWriter(x.Stderr)
	defer logOut.Close()
	logger := slog.New(newHandler(logOut))
	h.logger = logger
	svcOpts := payments.Options{Environment: *env, TimestampTolerance: *tolerance, IdempotencyTTL: *idempotencyTTL, MaxConns: *dbConns,
		WebhookAllow: dispatchOpts.Allow}
	return h.withService(ctx, svcOpts, func(svc *payments.Service) error {
		has, err := svc.HasPlatforms(ctx)
		if err != nil {
			return err
		}
		if !has {
			hint := program + " platform create -db " + shellQuote(payments.RedactDSN(db.path))
			if *env != payments.Sandbox {
				hint += " -env " + string(*env)
			}
			hint += " -name NAME"
			logger.Warn("no platform in the database yet; create one with: "+hint, "db", payments.RedactDSN(db.path)) // #nosec G706 -- the operator's own -db, shell-quoted, in a JSON log
		}
		scheme := "http"
		if *certFile != "" {
			scheme = "https"
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// The webhook dispatcher runs beside the server, and stops after it.
		dispatchOpts.Exclusive, dispatchOpts.Logger = !payments.IsPostgres(db.path), logger
		dispatcher := dispatch.New(svc, dispatchOpts)
		opts.Metrics = httpserver.NewMetrics(svc)
		opts.Metrics.Registry().MustRegister(dispatcher.Collectors()...)
		dispatchCtx, stopDispatch := context.WithCancel(context.WithoutCancel(ctx))
		dispatched := make(chan error, 1)
		go func() { dispatched <- dispatcher.Run(dispatchCtx) }()
		defer func() { stopDispatch(); <-dispatched }()
		metricsDone := make(chan error, 1)
		if *metricsAddr != "" {
			opts.MetricsApart = true
			mux := http.NewServeMux()
			mux.Handle("GET /metrics", opts.Metrics.Handler())
			go func() {
				err := httpserver.Run(ctx, mux, httpserver.Config{Addr: *metricsAddr, Logger: logger,
					Ready: func(a net.Addr) { logger.Info("metrics listening", "addr", a.String()) }})
				cancel() // a metrics listener that fails stops the server
				metricsDone <- err
			}()
		} else {
			metricsDone <- nil
		}
		loginURL := mountConsole(ctx, svc, logger, &opts, *consoleToken, *addr)
		err = httpserver.Run(ctx, httpserver.NewWithOptions(svc, logger, opts), httpserver.Config{
			Addr:     *addr,
			CertFile: *certFile,
			KeyFile:  *keyFile,
			Logger:   logger,
			Ready: func(a net.Addr) {
				logger.Info("listening", "addr", a.String(), "url", scheme+"://"+a.String(),
					"environment", string(*env), "db", payments.RedactDSN(db.path), "timestamp_tolerance", tolerance.String(),
					"data_key_id", svc.DataKeys().SealingID())
				if loginURL != "" {
					logger.Info("console: open "+scheme+"://"+a.String()+loginURL, "console", scheme+"://"+a.String()+console.Prefix)
				}
			},
		})
		cancel()
		if merr := <-metricsDone; err == nil && merr != nil {
			err = fmt.Errorf("metrics: %w", merr)
		}
		if err != nil {
			return err
		}
		logger.Info("stopped")
		return nil
	})
}

// mountConsole sets opts.Console to the browser console, with the token given, or, on a
// server that listens on loopback only, a fresh random one, whose login path it returns
// (to print once the server listens); a server given no token that listens beyond
// loopback serves no console.
func mountConsole(ctx context.Context, svc *payments.Service, logger *slog.Logger, opts *httpserver.Options, token, addr string) string {
	loginPath := ""
	if token == "" {
		if !loopbackOnly(addr) {
			logger.Info("console off: give -console-token to serve it on an address beyond loopback")
			return ""
		}
		token = console.NewToken()
		loginPath = console.Prefix + "login?token=" + token
	}
	samples := console.NewSampler(opts.Metrics.Registry())
	go samples.Run(ctx)
	opts.Console = console.New(svc, console.Options{Token: token, Logger: logger, Samples: samples})
	return loginPath
}

// loopbackOnly reports whether the listen address addr takes connections from this
// machine only: its host a loopback address, or localhost.
func loopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// logHandler returns the constructor of the log's handler for -log-level and -log-format.
func logHandler(level, format string) (func(io.Writer) slog.Handler, error) {
	var opts slog.HandlerOptions
	switch level {
	case "debug":
		opts.Level = slog.LevelDebug
	case "info":
		opts.Level = slog.LevelInfo
	case "warn":
		opts.Level = slog.LevelWarn
	case "error":
		opts.Level = slog.LevelError
	default:
		return nil, command.Usagef("-log-level %q: want debug, info, warn or error", level)
	}
	switch format {
	case "json":
		// slog's JSON handler, through which the access log writes its lines itself.
		return func(w io.Writer) slog.Handler { return httpserver.JSONLogHandler(w, opts.Level) }, nil
	case "text":
		return func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, &opts) }, nil
	}
	return nil, command.Usagef("-log-format %q: want json or text", format)
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

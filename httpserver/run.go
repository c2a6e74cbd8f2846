package httpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Config is how Run serves.
type Config struct {
	// Addr is the TCP address to listen on, e.g. "127.0.0.1:8080" (":0" picks a port).
	Addr string
	// CertFile and KeyFile, when set (both or neither), serve HTTPS; otherwise plain HTTP.
	CertFile, KeyFile string
	// Logger receives the server's own messages; nil discards them.
	Logger *slog.Logger
	// Ready, when set, is called with the bound address once the server accepts
	// connections.
	Ready func(addr net.Addr)
}

// Timeouts of the server: slow or stalled clients cannot hold connections for long.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 20 * time.Second
)

// Run serves h until ctx is done, then stops accepting connections and waits (up to 20 s)
// for the requests in flight to finish.
func Run(ctx context.Context, h http.Handler, cfg Config) error {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var tlsConfig *tls.Config
	switch {
	case (cfg.CertFile == "") != (cfg.KeyFile == ""):
		return errors.New("httpserver: a certificate needs its key and a key its certificate")
	case cfg.CertFile != "":
		// Loaded before listening, so that a bad pair fails at once, not after "listening".
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return err
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		TLSConfig:         tlsConfig,
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			served <- srv.ServeTLS(ln, "", "")
		} else {
			served <- srv.Serve(ln)
		}
	}()
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr())
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

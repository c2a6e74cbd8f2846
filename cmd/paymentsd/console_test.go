package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/platform-payments/payments/httpserver"
)

func TestLoopbackOnly(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true,
		"127.0.0.2:0":    true,
		"[::1]:8080":     true,
		"localhost:8080": true,
		":8080":          false,
		"0.0.0.0:8080":   false,
		"[::]:8080":      false,
		"10.0.0.1:8080":  false,
		"example.com:80": false,
		"127.0.0.1":      false, // no port: not an address serve listens on
	} {
		if got := loopbackOnly(addr); got != want {
			t.Errorf("loopbackOnly(%q) = %v, want %v", addr, got, want)
		}
	}
}

// A server given no token that listens beyond loopback serves no console, and says so.
func TestConsoleOffBeyondLoopback(t *testing.T) {
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(&log, nil))
	opts := httpserver.Options{}
	if url := mountConsole(context.Background(), nil, logger, &opts, "", "0.0.0.0:8080"); url != "" || opts.Console != nil {
		t.Errorf("no token, 0.0.0.0: login %q, console %v", url, opts.Console)
	}
	if !strings.Contains(log.String(), "console off") {
		t.Errorf("log %q does not say the console is off", log.String())
	}
}

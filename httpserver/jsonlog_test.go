package httpserver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-payments/payments"
)

// TestJSONLogRequestLine: an access log line written through JSONLogHandler is byte for
// byte what slog's JSON handler writes for it; written by the handler's own path when its
// text is plain, and by slog's otherwise.
func TestJSONLogRequestLine(t *testing.T) {
	end := time.Date(2026, 11, 25, 14, 25, 44, 470997455, time.UTC)
	plain := requestLine{end: end, method: "GET", path: "/api/platform/users/get/01a21319-1b70-7cdb-aea0-a91045e2df0c",
		status: 200, took: 558 * time.Microsecond, id: "023360a13cc99a0bd2898a9d"}
	with := func(change func(l *requestLine)) requestLine {
		l := plain
		change(&l)
		return l
	}
	for _, tc := range []struct {
		name string
		line requestLine
		own  bool // written by the handler's own path
	}{
		{"OK", plain, true},
		{"WholeSecond", with(func(l *requestLine) { l.end = end.Truncate(time.Second) }), true},
		{"OtherZone", with(func(l *requestLine) { l.end = end.In(time.FixedZone("IST", 5*3600+1800)) }), true},
		{"Monotonic", with(func(l *requestLine) { l.end = time.Now() }), true},
		{"ZeroDuration", with(func(l *requestLine) { l.took = 0 }), true},
		{"UnderAMicrosecond", with(func(l *requestLine) { l.took = 999 }), true},
		{"OneMicrosecond", with(func(l *requestLine) { l.took = time.Microsecond }), true},
		{"Long", with(func(l *requestLine) { l.took = 1234*time.Second + 567*time.Microsecond }), true},
		{"Hours", with(func(l *requestLine) { l.took = 1<<63 - 1 }), true},
		{"Negative", with(func(l *requestLine) { l.took = -3 * time.Millisecond }), true},
		{"Status", with(func(l *requestLine) { l.status = 422 }), true},
		{"AuthFailure", with(func(l *requestLine) { l.status, l.authFailure = 401, payments.AuthFailureBadSignature }), true},
		{"AuthFailureEscaped", with(func(l *requestLine) { l.authFailure = `"` }), false},
		{"PlainPunctuation", with(func(l *requestLine) { l.path = "/a<b>&c/'~!@#$%^*()_+=[]{};:,.?|`" }), true},
		{"Empty", with(func(l *requestLine) { l.method, l.path = "", "" }), true},
		{"Quote", with(func(l *requestLine) { l.path = `/a"b` }), false},
		{"Backslash", with(func(l *requestLine) { l.path = `/a\b` }), false},
		{"Control", with(func(l *requestLine) { l.path = "/a\nb\tc\x00d\x1f" }), false},
		{"Delete", with(func(l *requestLine) { l.path = "/a\x7fb" }), false},
		{"Unicode", with(func(l *requestLine) { l.path = "/zoë/東京" }), false},
		{"Separators", with(func(l *requestLine) { l.path = "/a\u2028b\u2029" }), false},
		{"InvalidUTF8", with(func(l *requestLine) { l.path = "/a\xffb" }), false},
		{"Method", with(func(l *requestLine) { l.method = "GÉT" }), false},
		{"YearBeyondFourDigits", with(func(l *requestLine) { l.end = end.AddDate(8000, 0, 0) }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want, got bytes.Buffer
			slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelInfo}).Handle(context.Background(), tc.line.record())
			s := &server{log: slog.New(JSONLogHandler(&got, slog.LevelInfo))}
			s.logRequest(context.Background(), tc.line)
			if got.String() != want.String() {
				t.Errorf("logged\n%s\nwant\n%s", got.Bytes(), want.Bytes())
			}
			if _, own := tc.line.appendJSON(nil); own != tc.own {
				t.Errorf("written by the handler's own path: %v, want %v", own, tc.own)
			}
		})
	}
}

// TestJSONLogHandler: JSONLogHandler logs everything else as slog's JSON handler does,
// its level and what it derives included, and drops the access log below its level.
func TestJSONLogHandler(t *testing.T) {
	line := requestLine{end: time.Now(), method: "GET", path: "/healthz", status: 200, took: time.Millisecond, id: "x"}
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn} {
		t.Run(level.String(), func(t *testing.T) {
			var want, got bytes.Buffer
			for _, c := range []struct {
				buf *bytes.Buffer
				h   slog.Handler
			}{
				{&want, slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: level})},
				{&got, JSONLogHandler(&got, level)},
			} {
				log := slog.New(c.h)
				log.Debug("debug", "n", 1)
				log.Info("listening", "addr", "127.0.0.1:8080", "ratio", 0.25)
				log.With("component", "dispatch").WithGroup("g").Warn("slow", "took", time.Second)
				log.Error("internal error", "error", fmt.Errorf("boom"))
				(&server{log: log}).logRequest(context.Background(), line)
			}
			// The times of the lines differ: compare what follows them.
			if g, w := stripTimes(got.String()), stripTimes(want.String()); g != w {
				t.Errorf("logged\n%s\nwant\n%s", g, w)
			}
		})
	}
}

// stripTimes removes the "time" member of each JSON line.
func stripTimes(lines string) string {
	var b strings.Builder
	for line := range strings.Lines(lines) {
		if rest, ok := strings.CutPrefix(line, `{"time":"`); ok {
			line = rest[strings.Index(rest, `"`):]
		}
		b.WriteString(line)
	}
	return b.String()
}

// TestJSONLogConcurrent: lines of both paths, from many goroutines at once, reach a
// writer that is not safe for concurrent use whole and one at a time (go test -race).
func TestJSONLogConcurrent(t *testing.T) {
	var out bytes.Buffer
	s := &server{log: slog.New(JSONLogHandler(&out, slog.LevelInfo))}
	var wg sync.WaitGroup
	const goroutines, lines = 8, 200
	for g := range goroutines {
		wg.Go(func() {
			for n := range lines {
				path := fmt.Sprintf("/plain/%d/%d", g, n)
				if n%2 == 1 {
					path = fmt.Sprintf("/escaped\n/%d/%d", g, n)
				}
				s.logRequest(context.Background(), requestLine{end: time.Now(), method: "GET", path: path, status: 200, id: "id"})
			}
		})
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != goroutines*lines {
		t.Fatalf("%d lines, want %d", len(got), goroutines*lines)
	}
	for _, line := range got {
		if !strings.HasPrefix(line, `{"time":"`) || !strings.HasSuffix(line, `"request_id":"id"}`) {
			t.Fatalf("line not whole: %q", line)
		}
	}
}

// TestJSONLogAllocations: the handler's own path writes a line without allocating.
func TestJSONLogAllocations(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's sync.Pool drops buffers")
	}
	var out bytes.Buffer
	out.Grow(1 << 20)
	s := &server{log: slog.New(JSONLogHandler(&out, slog.LevelInfo))}
	line := requestLine{end: time.Now(), method: "GET", path: "/api/platform/users/get/01a21319-1b70-7cdb-aea0-a91045e2df0c",
		status: 200, took: 558 * time.Microsecond, id: "023360a13cc99a0bd2898a9d"}
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { s.logRequest(ctx, line) }); n != 0 {
		t.Errorf("%v allocations a line, want none", n)
	}
	line.status, line.authFailure = 401, payments.AuthFailureUnknownPlatform
	if n := testing.AllocsPerRun(1000, func() { s.logRequest(ctx, line) }); n != 0 {
		t.Errorf("%v allocations a line with auth_failure, want none", n)
	}
}

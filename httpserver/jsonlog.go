package httpserver

import (
	"context"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/platform-payments/payments"
)

// JSONLogHandler returns a log handler that writes what slog.NewJSONHandler(w,
// &slog.HandlerOptions{Level: level}) writes, one line per Write, and through which the
// handler of a logger built on it (New, NewWithOptions) writes its access log's lines
// itself, byte for byte as slog would but without slog's general path: a line then costs
// no allocation and a fraction of the time. paymentsd serve logs JSON through it. Lines
// written the two ways never interleave, whatever w is.
func JSONLogHandler(w io.Writer, level slog.Leveler) slog.Handler {
	out := &lockedWriter{w: w}
	return &jsonLog{JSONHandler: slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level}), out: out}
}

// jsonLog is slog's JSON handler, with the writer it writes to for the access log's own
// lines. What it derives (WithAttrs, WithGroup) is slog's alone: the access log never
// logs through a derived handler.
type jsonLog struct {
	*slog.JSONHandler
	out *lockedWriter
}

// lockedWriter writes one line at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// requestLine is what the access log says of a request, answered at end after took.
type requestLine struct {
	end          time.Time
	method, path string
	status       int
	took         time.Duration
	id           string
	authFailure  payments.AuthFailure // "": authentication did not refuse the request
}

// durationMS is the request's duration in milliseconds, to the microsecond.
func (l requestLine) durationMS() float64 { return float64(l.took.Microseconds()) / 1000 }

// record is the line as a slog record.
func (l requestLine) record() slog.Record {
	// A record made here, not through Logger.LogAttrs: it would look up the caller's
	// program counter for a source location the access log never shows.
	r := slog.NewRecord(l.end, slog.LevelInfo, "request", 0)
	r.AddAttrs(
		slog.String("method", l.method),
		slog.String("path", l.path),
		slog.Int("status", l.status),
		slog.Float64("duration_ms", l.durationMS()),
		slog.String("request_id", l.id))
	if l.authFailure != "" {
		r.AddAttrs(slog.String("auth_failure", string(l.authFailure)))
	}
	return r
}

// logRequest writes the access log's line for a request, when the logger takes it.
func (s *server) logRequest(ctx context.Context, l requestLine) {
	h := s.log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	if j, ok := h.(*jsonLog); ok && j.writeLine(l) {
		return
	}
	h.Handle(ctx, l.record()) // #nosec G104 -- a log line that cannot be written has nowhere to be reported
}

// lineBuffers hold the lines writeLine writes; maxLineBuffer is the longest kept (a path
// of kilobytes is left to the collector).
var lineBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxLineBuffer = 4 << 10

// writeLine writes l as slog's JSON handler would and reports true, or, for a line whose
// text slog would escape (rare: the method and request id are plain, a path seldom is
// not), writes nothing and reports false.
func (j *jsonLog) writeLine(l requestLine) bool {
	buf := lineBuffers.Get().(*[]byte)
	line, ok := l.appendJSON((*buf)[:0])
	if ok {
		j.out.Write(line) // #nosec G104 -- as logRequest's Handle
	}
	if cap(line) <= maxLineBuffer {
		*buf = line
		lineBuffers.Put(buf)
	}
	return ok
}

// appendJSON appends l as slog's JSON handler writes its record, and reports true; or
// false when the handler would write something else than plain text between the quotes
// (a character it escapes), an error for the time (a year beyond four digits), or the
// duration in exponent form (never under 1e21 milliseconds but for under a nanosecond).
func (l requestLine) appendJSON(b []byte) ([]byte, bool) {
	ms := l.durationMS()
	if y := l.end.Year(); y < 0 || y >= 10000 {
		return b, false
	}
	if a := math.Abs(ms); a != 0 && (a < 1e-6 || a >= 1e21) { // encoding/json's bounds of 'f'
		return b, false
	}
	if !plainJSON(l.method) || !plainJSON(l.path) || !plainJSON(l.id) || !plainJSON(string(l.authFailure)) {
		return b, false
	}
	b = append(b, `{"time":"`...)
	b = l.end.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","method":"`...)
	b = append(b, l.method...)
	b = append(b, `","path":"`...)
	b = append(b, l.path...)
	b = append(b, `","status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendFloat(b, ms, 'f', -1, 64)
	b = append(b, `,"request_id":"`...)
	b = append(b, l.id...)
	if l.authFailure != "" {
		b = append(b, `","auth_failure":"`...)
		b = append(b, l.authFailure...)
	}
	return append(b, "\"}\n"...), true
}

// plainJSON reports whether s is written in a JSON string as it is: printable ASCII
// without a quote or a backslash.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

package httpserver

import (
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	mathrand "math/rand/v2"
	"net/http"
	"time"
)

// Request ids: the client's when it is short and plain, otherwise a new one.
const maxRequestIDLength = 128

// validRequestID reports whether a client's X-Request-ID is kept: 1 to 128 characters of
// A-Z a-z 0-9 . _ - (CONTRACT section 3).
func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > maxRequestIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// newRequestID returns 96 random bits in hex. A request id is no secret, only unique:
// the runtime's per-thread generator (ChaCha8, seeded from the system's randomness)
// gives them without a system call.
func newRequestID() string {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], mathrand.Uint64()) // #nosec G404 -- a request id is unique, not secret
	binary.LittleEndian.PutUint32(b[8:], mathrand.Uint32()) // #nosec G404 -- a request id is unique, not secret
	var text [24]byte
	hex.Encode(text[:], b[:])
	return string(text[:])
}

// requestID returns the id accessLog gave the request answered through w, "" when w is
// not accessLog's.
func requestID(w http.ResponseWriter) string {
	for {
		switch x := w.(type) {
		case *statusRecorder:
			return x.id
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return ""
		}
	}
}

// accessLog gives each request its X-Request-ID and logs method, path, status, duration
// and request id once it is answered. Headers and bodies are never logged: they carry
// secrets, signatures and account numbers.
//
// It is on every request's path, so it costs little: the id travels in the response
// writer (no new request or context), and the line is built from typed attributes only
// when the logger takes it.
func (s *server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := headerValue(r.Header, headerRequestID)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header()[headerRequestID] = []string{id}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK, id: id}
		s.metrics.inFlight.Inc()
		defer func() {
			ctx := r.Context()
			if p := recover(); p != nil {
				s.log.ErrorContext(ctx, "panic", "request_id", id, "panic", p)
				if !rec.wrote {
					writeJSON(rec, http.StatusInternalServerError, errorEnvelope("Internal error.", s.svc.Now()))
				}
			}
			s.metrics.inFlight.Dec()
			// r.Pattern is the route the mux matched (it sets it on r), never the path.
			s.metrics.observe(r.Pattern, r.Method, rec.status, time.Since(start))
			h := s.log.Handler()
			if !h.Enabled(ctx, slog.LevelInfo) {
				return
			}
			// A record made here, not through Logger.LogAttrs: it would look up the
			// caller's program counter for a source location the access log never shows.
			end := time.Now()
			line := slog.NewRecord(end, slog.LevelInfo, "request", 0)
			line.AddAttrs(
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", rec.status),
				slog.Float64("duration_ms", float64(end.Sub(start).Microseconds())/1000),
				slog.String("request_id", id))
			h.Handle(ctx, line) // #nosec G104 -- a log line that cannot be written has nowhere to be reported
		}()
		next.ServeHTTP(rec, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	id     string // the request's X-Request-ID
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

package httpserver

import (
	"encoding/binary"
	"encoding/hex"
	mathrand "math/rand/v2"
	"net/http"
	"time"

	"github.com/platform-payments/payments"
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
	if rec := recorderOf(w); rec != nil {
		return rec.id
	}
	return ""
}

// noteAuthFailure puts why authentication refused the request answered through w on its
// access log line; nothing when w is not accessLog's.
func noteAuthFailure(w http.ResponseWriter, reason payments.AuthFailure) {
	if rec := recorderOf(w); rec != nil {
		rec.authFailure = reason
	}
}

// recorderOf returns accessLog's writer under w, nil when there is none.
func recorderOf(w http.ResponseWriter) *statusRecorder {
	for {
		switch x := w.(type) {
		case *statusRecorder:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// accessLog gives each request its X-Request-ID and logs method, path, status, duration
// and request id once it is answered, and why authentication refused it if it did (an
// AuthFailure, never what the request sent). Headers and bodies are never logged: they
// carry secrets, signatures and account numbers.
//
// It is on every request's path, so it costs little: the id travels in the response
// writer (no new request or context), the line is built only when the logger takes it,
// and through JSONLogHandler without slog's general path (logRequest).
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
				s.metrics.serverErrors.WithLabelValues(string(payments.CodeInternal)).Inc()
				if !rec.wrote {
					writeJSON(rec, http.StatusInternalServerError, errorEnvelope("Internal error.", s.svc.Now()))
				}
			}
			s.metrics.inFlight.Dec()
			end := time.Now()
			// r.Pattern is the route the mux matched (it sets it on r), never the path.
			s.metrics.observe(r.Pattern, r.Method, rec.status, end.Sub(start))
			s.logRequest(ctx, requestLine{end: end, method: r.Method, path: r.URL.Path,
				status: rec.status, took: end.Sub(start), id: id, authFailure: rec.authFailure})
		}()
		next.ServeHTTP(rec, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status      int
	wrote       bool
	id          string               // the request's X-Request-ID
	authFailure payments.AuthFailure // why authentication refused the request ("": it did not)
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

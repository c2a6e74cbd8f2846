package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/platform-payments/payments"
)

// statusByCode is the one mapping from the library's error codes to HTTP statuses.
var statusByCode = map[payments.Code]int{
	payments.CodeInvalid:      http.StatusUnprocessableEntity,
	payments.CodeUnauthorized: http.StatusUnauthorized,
	payments.CodeForbidden:    http.StatusForbidden,
	payments.CodeNotFound:     http.StatusNotFound,
	payments.CodeConflict:     http.StatusConflict,
	payments.CodeInternal:     http.StatusInternalServerError,
	payments.CodeUnavailable:  http.StatusServiceUnavailable,
}

// unavailableRetryAfter is the Retry-After of a 503 (CodeUnavailable), in seconds: a
// database restarting or failing over is back within seconds, and a client that waits
// one second between tries costs a recovering database little.
const unavailableRetryAfter = "1"

// statusClientClosedRequest answers a request whose client went away before its answer
// was ready (nginx's 499): no one reads it, and it is no fault of the server's, so it is
// neither a 500 nor counted or logged as one; the access log and the request metrics show
// it under its own status.
const statusClientClosedRequest = 499

// httpError is an outcome decided by the HTTP layer itself (413, 415, 501).
type httpError struct {
	status  int
	message string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s", e.status, e.message) }

func statusError(status int, message string) error { return &httpError{status, message} }

// throttled is a 429: a rate limit reached, or too many authentication failures. It
// carries the bucket that refused, for the Retry-After and RateLimit-* headers.
type throttled struct {
	message    string
	quota      quota
	tokens     float64 // what the bucket held when it refused
	retryAfter int     // seconds
}

func (e *throttled) Error() string { return "429 " + e.message }

// writeError answers err: a 429 with Retry-After and the RateLimit-* headers when a
// limit refused the request, a 422 with the pydantic detail list for validation failures,
// a 503 with Retry-After when the database cannot be reached, the error envelope
// otherwise. Internal faults and unavailable databases are logged with the request id
// (their causes never answered) and counted.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	s.answerError(w, r, err, s.svc.Now())
}

// answerError is writeError for an operation's error, whose envelope shows at (call.at): a
// refusal stored under an Idempotency-Key shows the time of its first call, in its first
// answer and in every replay.
func (s *server) answerError(w http.ResponseWriter, r *http.Request, err error, at time.Time) {
	var th *throttled
	if errors.As(err, &th) {
		h := w.Header()
		h.Set("Retry-After", strconv.Itoa(th.retryAfter))
		th.quota.setHeaders(h, th.tokens)
		writeJSON(w, http.StatusTooManyRequests, errorEnvelope(th.message, s.svc.Now()))
		return
	}
	var he *httpError
	if errors.As(err, &he) {
		writeJSON(w, he.status, errorEnvelope(he.message, s.svc.Now()))
		return
	}
	code := payments.ErrorCode(err)
	var pe *payments.Error
	if code == payments.CodeInvalid && errors.As(err, &pe) && len(pe.Fields) > 0 {
		writeJSON(w, http.StatusUnprocessableEntity, payments.ValidationBody{Detail: pe.Fields})
		return
	}
	if gone := r.Context().Err(); code == payments.CodeInternal && gone != nil && errors.Is(err, gone) {
		s.log.InfoContext(r.Context(), "client went away", "request_id", requestID(w),
			"method", r.Method, "path", r.URL.Path, "error", err)
		writeJSON(w, statusClientClosedRequest, errorEnvelope("Client closed the request.", s.svc.Now()))
		return
	}
	switch code {
	case payments.CodeInternal:
		s.metrics.serverErrors.WithLabelValues(string(code)).Inc()
		s.log.ErrorContext(r.Context(), "internal error", "request_id", requestID(w),
			"method", r.Method, "path", r.URL.Path, "error", err)
	case payments.CodeUnavailable:
		s.metrics.serverErrors.WithLabelValues(string(code)).Inc()
		s.log.WarnContext(r.Context(), "database unavailable", "request_id", requestID(w),
			"method", r.Method, "path", r.URL.Path, "error", err)
		w.Header().Set("Retry-After", unavailableRetryAfter)
	}
	writeJSON(w, statusByCode[code], errorEnvelope(payments.ErrorMessage(err), at))
}

func errorEnvelope(message string, now time.Time) payments.Envelope {
	return payments.Envelope{Success: false, Message: message, QueryGeneratedTime: now.Unix()}
}

// writeJSON writes v compactly, without HTML escaping, as the response.
//
// v is encoded before anything is written: a value that does not encode is a bug in the
// handler, and the panic reaches accessLog, which logs it with the request id and answers
// 500 instead of status with a truncated body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	e := encode(status, v)
	defer e.release()
	writeBody(w, status, e.buf.Bytes())
}

// encoder is a response's buffer with its JSON encoder, reused from one response to the
// next: encoding a response then allocates nothing of its own.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// maxPooledBuffer is the largest buffer put back for reuse: a rare large answer (a 422
// listing thousands of fields) is left to the collector instead of held.
const maxPooledBuffer = 64 << 10

// encode encodes v into a pooled encoder, which the caller releases once done with its
// bytes.
func encode(status int, v any) *encoder {
	e := encoders.Get().(*encoder)
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		e.release()
		panic(fmt.Errorf("httpserver: encoding a %d response: %w", status, err))
	}
	return e
}

func (e *encoder) release() {
	if e.buf.Cap() <= maxPooledBuffer {
		encoders.Put(e)
	}
}

// writeBody writes a JSON response body encoded before.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body) // #nosec G104 -- a failed write means the client has gone: nothing is left to tell it, and accessLog still logs the request
}

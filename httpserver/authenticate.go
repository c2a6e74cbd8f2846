package httpserver

import (
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// authenticate establishes who calls, in the contract's place of the 401, and applies the
// limits there too: the failure throttle before and after authentication, the caller's
// rate limit once it is known. A refusal is a 429 in the place of the 401 (or of what
// would have followed it). Every answer after a passed rate limit carries the caller's
// RateLimit-* headers. Why authentication refused a request goes to its access log line
// and to payments_auth_failures_total, never to the caller.
func (s *server) authenticate(w http.ResponseWriter, r *http.Request, auth authKind, raw []byte, c *call) error {
	ctx := r.Context()
	addr := clientAddr(r, s.ipHeader)
	nameHeader, secretHeader := headerPlatformID, headerSignature
	if auth == userAPI {
		nameHeader, secretHeader = headerAPIKey, headerAPISecret
	}
	name, secret := headerValue(r.Header, nameHeader), headerValue(r.Header, secretHeader)
	claim, presented := claimOf(auth, name, secret)
	if th := s.failures.admit(addr, claim, s.now()); th != nil {
		s.metrics.rateLimited.WithLabelValues(limitAuthFailures).Inc()
		return th
	}
	var err error
	switch auth {
	case platformAPI:
		c.platform, err = s.svc.AuthenticatePlatformRequest(ctx, payments.PlatformRequest{
			PlatformID: name,
			Signature:  secret,
			Timestamp:  headerValue(r.Header, headerTimestamp),
			Method:     r.Method,
			Target:     r.RequestURI,
			Body:       raw,
		})
	case userAPI:
		c.caller, err = s.svc.AuthenticateAPIKey(ctx, name, secret)
	}
	if err != nil {
		if reason := payments.AuthFailureOf(err); reason != "" {
			s.metrics.authFailures.WithLabelValues(string(reason)).Inc()
			noteAuthFailure(w, reason)
		}
		// Only a guess is throttled: a request without credentials guesses nothing, and
		// an internal fault is nobody's failure.
		if presented && payments.ErrorCode(err) == payments.CodeUnauthorized {
			if th := s.failures.fail(addr, claim, s.now()); th != nil {
				s.metrics.rateLimited.WithLabelValues(limitAuthFailures).Inc()
				return th
			}
		}
		return err
	}
	if s.rates == nil {
		return nil
	}
	// claim names the credential that has just been proved: the platform, or the API key.
	ok, tokens := s.rates.take(claim, s.now())
	if !ok {
		s.metrics.rateLimited.WithLabelValues(limitRate).Inc()
		return s.rates.tooMany(msgTooManyRequests, tokens)
	}
	s.rates.setHeaders(w.Header(), tokens)
	return nil
}

// The limit label of payments_rate_limited_total.
const (
	limitRate         = "rate"
	limitAuthFailures = "auth_failures"
)

// claimOf returns the credential a request of auth's routes names with the values of its
// two headers, as a key of the limiters ("" when the name is missing or malformed), and
// whether it presents credentials at all (both headers).
func claimOf(auth authKind, name, secret string) (claim string, presented bool) {
	kind := "platform "
	if auth == userAPI {
		kind = "key "
	}
	presented = name != "" && secret != ""
	if parsed, err := uuid.Parse(name); err == nil {
		canonical := name // as a client sends it, usually: the claim costs one allocation
		if len(name) != canonicalUUIDLength || strings.ContainsAny(name, "ABCDEF") {
			canonical = parsed.String()
		}
		claim = kind + canonical
	}
	return claim, presented
}

// canonicalUUIDLength is the length of a UUID's canonical text (lower-case hex digits in
// groups of 8-4-4-4-12): a UUID that parses and is this long, without an upper-case
// digit, is written canonically.
const canonicalUUIDLength = 36

// The canonical names of the headers read on every request. Header.Get canonicalizes its
// key at each call, and allocates for a name not canonical already (X-Platform-ID,
// X-Request-ID); headerValue, given the canonical name, does neither.
var (
	headerPlatformID = http.CanonicalHeaderKey(payments.HeaderPlatformID)
	headerSignature  = http.CanonicalHeaderKey(payments.HeaderSignature)
	headerTimestamp  = http.CanonicalHeaderKey(payments.HeaderTimestamp)
	headerAPIKey     = http.CanonicalHeaderKey(payments.HeaderAPIKey)
	headerAPISecret  = http.CanonicalHeaderKey(payments.HeaderAPISecret)
	headerRequestID  = http.CanonicalHeaderKey("X-Request-ID")
)

// headerValue returns what h.Get(name) returns, for a canonical name.
func headerValue(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

package httpserver

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// authenticate establishes who calls, in the contract's place of the 401, and applies the
// limits there too: the failure throttle before and after authentication, the caller's
// rate limit once it is known. A refusal is a 429 in the place of the 401 (or of what
// would have followed it). Every answer after a passed rate limit carries the caller's
// RateLimit-* headers.
func (s *server) authenticate(w http.ResponseWriter, r *http.Request, auth authKind, raw []byte, c *call) error {
	ctx := r.Context()
	addr := clientAddr(r, s.ipHeader)
	claim, presented := claimOf(r, auth)
	if th := s.failures.admit(addr, claim, s.now()); th != nil {
		s.metrics.rateLimited.WithLabelValues(limitAuthFailures).Inc()
		return th
	}
	var err error
	switch auth {
	case platformAPI:
		c.platform, err = s.svc.AuthenticatePlatformRequest(ctx, payments.PlatformRequest{
			PlatformID: r.Header.Get(payments.HeaderPlatformID),
			Signature:  r.Header.Get(payments.HeaderSignature),
			Timestamp:  r.Header.Get(payments.HeaderTimestamp),
			Method:     r.Method,
			Target:     r.RequestURI,
			Body:       raw,
		})
	case userAPI:
		c.caller, err = s.svc.AuthenticateAPIKey(ctx, r.Header.Get(payments.HeaderAPIKey), r.Header.Get(payments.HeaderAPISecret))
	}
	if err != nil {
		// Only a guess is counted: a request without credentials guesses nothing, and an
		// internal fault is nobody's failure.
		if presented && payments.ErrorCode(err) == payments.CodeUnauthorized {
			s.metrics.authFailures.Inc()
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

// claimOf returns the credential a request names, as a key of the limiters ("" when the
// name is missing or malformed), and whether it presents credentials at all (both
// headers of its route).
func claimOf(r *http.Request, auth authKind) (claim string, presented bool) {
	name, secret, kind := payments.HeaderPlatformID, payments.HeaderSignature, "platform "
	if auth == userAPI {
		name, secret, kind = payments.HeaderAPIKey, payments.HeaderAPISecret, "key "
	}
	id := r.Header.Get(name)
	presented = id != "" && r.Header.Get(secret) != ""
	if parsed, err := uuid.Parse(id); err == nil {
		claim = kind + parsed.String()
	}
	return claim, presented
}

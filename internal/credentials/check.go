package credentials

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/platformsig"
)

// Failure is why authentication refused a request: the value of its payments.AuthFailure,
// whose constants say what each means.
type Failure string

// The failures, in the order of precedence: of those that apply to a request, the first
// is its failure.
const (
	MissingPlatformID    Failure = "missing_platform_id"
	MissingSignature     Failure = "missing_signature"
	MalformedPlatformID  Failure = "malformed_platform_id"
	MalformedSignature   Failure = "malformed_signature"
	UnknownPlatform      Failure = "unknown_platform"
	WrongEnvironment     Failure = "wrong_environment"
	TimestampNotSigned   Failure = "timestamp_not_signed"
	TimestampNotRequired Failure = "timestamp_not_required"
	BadSignature         Failure = "bad_signature"
	MissingTimestamp     Failure = "missing_timestamp"
	MalformedTimestamp   Failure = "malformed_timestamp"
	StaleTimestamp       Failure = "stale_timestamp"
	MissingAPIKey        Failure = "missing_api_key"
	MissingAPISecret     Failure = "missing_api_secret"
	MalformedAPIKey      Failure = "malformed_api_key" // #nosec G101 -- a failure's name, not a credential
	UnknownAPIKey        Failure = "unknown_api_key"
	BadAPISecret         Failure = "bad_api_secret"
)

// Failures lists every failure, in the order of precedence.
var Failures = []Failure{
	MissingPlatformID, MissingSignature, MalformedPlatformID, MalformedSignature, UnknownPlatform,
	WrongEnvironment, TimestampNotSigned, TimestampNotRequired, BadSignature, MissingTimestamp,
	MalformedTimestamp, StaleTimestamp, MissingAPIKey, MissingAPISecret, MalformedAPIKey,
	UnknownAPIKey, BadAPISecret,
}

// Request is what platform authentication reads of a request (payments.PlatformRequest):
// its three authentication headers ("" when absent), method, target and body.
type Request struct {
	PlatformID, Signature, Timestamp string
	Method, Target                   string
	Body                             []byte
}

// Scope is what a request is checked against: the service's environment, its
// signed-timestamp window in whole seconds either way, and its clock.
type Scope struct {
	Env    string
	Window int64
	Now    func() time.Time
}

// CheckPlatform checks a platform request's signature (and, for a platform that requires
// one, its timestamp) and returns the platform's id, or why it is refused. The signature
// is checked first; past the header checks, a failure costs the same whether or not the
// platform exists and whatever it requires (payments.Service.AuthenticatePlatformRequest).
// An error is the store's.
func (c *Credentials) CheckPlatform(ctx context.Context, r Request, in Scope) (uuid.UUID, Failure, error) {
	switch {
	case r.PlatformID == "":
		return uuid.Nil, MissingPlatformID, nil
	case r.Signature == "":
		return uuid.Nil, MissingSignature, nil
	}
	id, err := uuid.Parse(r.PlatformID)
	if err != nil {
		return uuid.Nil, MalformedPlatformID, nil
	}
	var sigBuf [sha256.Size]byte
	sig, err := platformsig.DecodeSignature(&sigBuf, r.Signature)
	if err != nil {
		return uuid.Nil, MalformedSignature, nil
	}
	p, cached, err := c.Platform(ctx, id)
	if err != nil {
		return uuid.Nil, "", err
	}
	plain, stamped, hasStamped := p.MACs.Sums(r.Method, r.Target, r.Body, r.Timestamp)
	want := plain[:]
	if p.RequireTimestamp && hasStamped {
		want = stamped[:]
	}
	if hmac.Equal(want, sig) && p.Known && p.Env == in.Env {
		if p.RequireTimestamp {
			if f := in.timestamp(r.Timestamp); f != "" {
				return uuid.Nil, f, nil
			}
		}
		return id, "", nil
	}
	if cached { // the lookup an unknown id costs
		if _, err := c.LoadPlatform(ctx, c.Absent(id)); err != nil {
			return uuid.Nil, "", err
		}
	}
	return uuid.Nil, signatureFailure(p, in.Env, sig, plain[:], stamped[:], hasStamped), nil
}

// signatureFailure returns why a request whose signature, platform or environment is not
// right was refused. It tells a signature over the other form of the string to sign (with
// X-Timestamp or without, whichever the platform does not sign) from another wrong
// signature with one comparison more, made for any request with X-Timestamp, whatever
// the platform requires: the cost depends on the request alone.
func signatureFailure(p Platform, env string, sig, plain, stamped []byte, hasStamped bool) Failure {
	other := stamped
	if p.RequireTimestamp {
		other = plain
	}
	otherForm := hasStamped && hmac.Equal(other, sig)
	switch {
	case len(sig) != sha256.Size:
		return MalformedSignature
	case !p.Known:
		return UnknownPlatform
	case p.Env != env:
		return WrongEnvironment
	case otherForm && p.RequireTimestamp:
		return TimestampNotSigned
	case otherForm:
		return TimestampNotRequired
	}
	return BadSignature
}

// timestamp checks the X-Timestamp of a request whose signature is right, for a platform
// that requires one: present, an integer, and at most the window away from the clock,
// either way (exactly the window is accepted).
func (in Scope) timestamp(value string) Failure {
	if value == "" {
		return MissingTimestamp
	}
	ts, ok := platformsig.ParseTimestamp(value)
	if !ok {
		return MalformedTimestamp
	}
	now := in.Now().Unix()
	if ts < now-in.Window || ts > now+in.Window {
		return StaleTimestamp
	}
	return ""
}

// CheckAPIKey checks a user-API key and secret and returns the key's credential, or why it
// is refused. A failure costs the same whether or not the key exists: the secret's hash
// compared with the key's (or a decoy's), and one store lookup that finds nothing. An
// error is the store's.
func (c *Credentials) CheckAPIKey(ctx context.Context, apiKey, apiSecret, env string) (APIKey, Failure, error) {
	switch {
	case apiKey == "":
		return APIKey{}, MissingAPIKey, nil
	case apiSecret == "":
		return APIKey{}, MissingAPISecret, nil
	}
	key, err := uuid.Parse(apiKey)
	if err != nil {
		return APIKey{}, MalformedAPIKey, nil
	}
	k, cached, err := c.APIKey(ctx, key)
	if err != nil {
		return APIKey{}, "", err
	}
	sum := sha256.Sum256([]byte(apiSecret))
	if subtle.ConstantTimeCompare(sum[:], k.SecretHash) == 1 && k.Known && k.Env == env {
		return k, "", nil
	}
	if cached { // the lookup an unknown key costs
		if _, err := c.LoadAPIKey(ctx, c.Absent(key)); err != nil {
			return APIKey{}, "", err
		}
	}
	switch {
	case !k.Known:
		return APIKey{}, UnknownAPIKey, nil
	case k.Env != env:
		return APIKey{}, WrongEnvironment, nil
	}
	return APIKey{}, BadAPISecret, nil
}

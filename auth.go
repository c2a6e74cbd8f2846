package payments

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/credentials"
	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/validate"
	"github.com/platform-payments/payments/queries"
	"github.com/platform-payments/payments/signing"
)

// Authentication headers.
const (
	HeaderPlatformID = signing.HeaderPlatformID
	HeaderSignature  = signing.HeaderSignature
	HeaderTimestamp  = signing.HeaderTimestamp // platforms that require signed timestamps
	HeaderAPIKey     = signing.HeaderAPIKey
	HeaderAPISecret  = signing.HeaderAPISecret
)

// Platform is a tenant: the company calling the platform endpoints for its users.
type Platform struct {
	ID          uuid.UUID   `json:"platform_id"`
	Name        string      `json:"name"`
	Environment Environment `json:"environment"`
	// RequireTimestamp: the platform's requests carry a signed X-Timestamp.
	RequireTimestamp bool      `json:"require_timestamp"`
	CreatedAt        time.Time `json:"created_at"`
}

// PlatformOptions are the settings of a new platform beyond its name and environment.
// The zero value is a platform of the specification's signing scheme.
type PlatformOptions struct {
	// RequireTimestamp makes every request of the platform carry X-Timestamp, its Unix
	// seconds, covered by the signature (SignTimestamped) and within the service's
	// TimestampTolerance of its clock. It is set once, at creation.
	RequireTimestamp bool
}

// PlatformCredentials is a new platform with its signing secret, shown once.
// RequireTimestamp is written to JSON only when set, so a platform of the specification's
// scheme prints {"platform_id","secret","environment"} exactly.
type PlatformCredentials struct {
	PlatformID       uuid.UUID   `json:"platform_id"`
	Secret           string      `json:"secret"`
	Environment      Environment `json:"environment"`
	RequireTimestamp bool        `json:"require_timestamp,omitempty"`
}

// APIKey is a new user-API credential; the secret is shown once and stored only as a hash.
type APIKey struct {
	APIKey    uuid.UUID `json:"api_key"`
	APISecret string    `json:"api_secret"`
}

// Caller is the user a user-API request acts for.
type Caller struct {
	UserID     uuid.UUID
	PlatformID uuid.UUID
}

// StringToSign is the message a platform request's signature covers: the method, the
// request target exactly as sent (path and query), and the hex SHA-256 of the body.
// It is signing.StringToSign, as are the functions below their namesakes there.
func StringToSign(method, target string, body []byte) string {
	return signing.StringToSign(method, target, body)
}

// Sign returns the X-Signature of a platform request: hex HMAC-SHA256 of StringToSign
// under the platform's secret. Clients and the server use this same function.
func Sign(secret, method, target string, body []byte) string {
	return signing.Sign(secret, method, target, body)
}

// StringToSignTimestamped is the message a request of a platform that requires signed
// timestamps covers: StringToSign followed by timestamp, the X-Timestamp value exactly
// as sent (Unix seconds in decimal, as Timestamp writes them).
func StringToSignTimestamped(method, target string, body []byte, timestamp string) string {
	return signing.StringToSignTimestamped(method, target, body, timestamp)
}

// SignTimestamped returns the X-Signature of a request of a platform that requires
// signed timestamps: hex HMAC-SHA256 of StringToSignTimestamped under the platform's
// secret. The request sends timestamp as X-Timestamp.
func SignTimestamped(secret, method, target string, body []byte, timestamp string) string {
	return signing.SignTimestamped(secret, method, target, body, timestamp)
}

// Timestamp returns the X-Timestamp value for t: its Unix seconds in decimal.
func Timestamp(t time.Time) string { return signing.Timestamp(t) }

// AuthFailure names why authentication refused a request, for the operator's log and
// metrics. The caller is never told: its answer is the same whatever the reason, but for
// a missing header, and for what is wrong with X-Timestamp once the signature is right.
type AuthFailure string

// The reasons authentication refuses a request, in the order of precedence: of the
// reasons that apply to a request, the first is its reason.
const (
	// Platform requests (AuthenticatePlatformRequest).
	AuthFailureMissingPlatformID   AuthFailure = "missing_platform_id"   // no X-Platform-ID
	AuthFailureMissingSignature    AuthFailure = "missing_signature"     // no X-Signature
	AuthFailureMalformedPlatformID AuthFailure = "malformed_platform_id" // X-Platform-ID is no UUID
	AuthFailureMalformedSignature  AuthFailure = "malformed_signature"   // X-Signature is not 64 hex digits
	AuthFailureUnknownPlatform     AuthFailure = "unknown_platform"      // no platform has the id
	// AuthFailureWrongEnvironment: the platform, or the API key's user's platform, is of
	// the other environment (a sandbox credential presented to production, or the reverse).
	AuthFailureWrongEnvironment AuthFailure = "wrong_environment"
	// AuthFailureTimestampNotSigned: the platform requires signed timestamps, and the
	// signature is right for the string to sign without the request's X-Timestamp.
	AuthFailureTimestampNotSigned AuthFailure = "timestamp_not_signed"
	// AuthFailureTimestampNotRequired: the platform signs by the specification's scheme,
	// and the signature is right for the string to sign with X-Timestamp appended.
	AuthFailureTimestampNotRequired AuthFailure = "timestamp_not_required"
	// AuthFailureBadSignature: the signature is not the platform's of this request: made
	// with another secret, or over another string to sign.
	AuthFailureBadSignature AuthFailure = "bad_signature"
	// The timestamp of a platform that requires one, once the signature is right.
	AuthFailureMissingTimestamp   AuthFailure = "missing_timestamp"   // no X-Timestamp
	AuthFailureMalformedTimestamp AuthFailure = "malformed_timestamp" // X-Timestamp is not Unix seconds
	AuthFailureStaleTimestamp     AuthFailure = "stale_timestamp"     // X-Timestamp is outside the window

	// User-API requests (AuthenticateAPIKey), and AuthFailureWrongEnvironment.
	AuthFailureMissingAPIKey    AuthFailure = "missing_api_key"    // no X-Api-Key
	AuthFailureMissingAPISecret AuthFailure = "missing_api_secret" // no X-Api-Secret
	AuthFailureMalformedAPIKey  AuthFailure = "malformed_api_key"  // #nosec G101 -- a reason's name: X-Api-Key is no UUID
	AuthFailureUnknownAPIKey    AuthFailure = "unknown_api_key"    // no key has the id
	AuthFailureBadAPISecret     AuthFailure = "bad_api_secret"     // the secret is not the key's
)

// AuthFailureOf returns why authentication refused the request err was returned for
// (AuthenticatePlatformRequest, AuthenticatePlatform, AuthenticateAPIKey), "" for any
// other error, nil included.
func AuthFailureOf(err error) AuthFailure {
	var r *authRefusal
	if errors.As(err, &r) {
		return r.reason
	}
	return ""
}

// authRefusal is a refused authentication: the *Error the caller is answered, whose
// code, message and text it keeps, and the reason for AuthFailureOf.
type authRefusal struct {
	err    *Error
	reason AuthFailure
}

func (r *authRefusal) Error() string { return r.err.Error() }

// Unwrap returns the *Error the caller is answered.
func (r *authRefusal) Unwrap() error { return r.err }

var errBadCredentials = &Error{Code: CodeUnauthorized, Message: "Invalid credentials."}

// refusals holds the error of each reason, made once: a refusal allocates nothing. A
// missing header is named, and so is what is wrong with X-Timestamp (only a caller who
// holds the secret gets that far); every other reason answers errBadCredentials alike.
var refusals = func() map[AuthFailure]*authRefusal {
	messages := map[AuthFailure]*Error{
		AuthFailureMissingPlatformID:  missingHeader(HeaderPlatformID),
		AuthFailureMissingSignature:   missingHeader(HeaderSignature),
		AuthFailureMissingTimestamp:   missingHeader(HeaderTimestamp),
		AuthFailureMalformedTimestamp: {Code: CodeUnauthorized, Message: "Malformed header X-Timestamp: want Unix seconds."},
		AuthFailureStaleTimestamp:     {Code: CodeUnauthorized, Message: "Request timestamp outside the allowed window."},
		AuthFailureMissingAPIKey:      missingHeader(HeaderAPIKey),
		AuthFailureMissingAPISecret:   missingHeader(HeaderAPISecret),
	}
	refusals := map[AuthFailure]*authRefusal{}
	for _, f := range credentials.Failures {
		reason := AuthFailure(f)
		e := messages[reason]
		if e == nil {
			e = errBadCredentials
		}
		refusals[reason] = &authRefusal{err: e, reason: reason}
	}
	return refusals
}()

// refuse returns the error of a refusal for reason.
func refuse(reason AuthFailure) error {
	if r, ok := refusals[reason]; ok {
		return r
	}
	return &authRefusal{err: errBadCredentials, reason: reason} // a reason left out of refusals
}

func missingHeader(name string) *Error {
	return Errorf(CodeUnauthorized, "Missing header %s.", name)
}

// PlatformRequest is what platform authentication reads of a request: its three
// authentication headers ("" when absent), method, request target (path and query
// exactly as sent) and body.
type PlatformRequest struct {
	PlatformID string // X-Platform-ID
	Signature  string // X-Signature
	Timestamp  string // X-Timestamp
	Method     string
	Target     string
	Body       []byte
}

// AuthenticatePlatform checks a request without X-Timestamp, the specification's
// scheme: AuthenticatePlatformRequest with the other fields as given.
func (s *Service) AuthenticatePlatform(ctx context.Context, platformID, signature, method, target string, body []byte) (uuid.UUID, error) {
	return s.AuthenticatePlatformRequest(ctx, PlatformRequest{
		PlatformID: platformID, Signature: signature, Method: method, Target: target, Body: body,
	})
}

// AuthenticatePlatformRequest checks a platform request's X-Platform-ID and X-Signature
// headers against the method, request target and body, and returns the platform's id.
// A platform of the specification's scheme signs StringToSign and X-Timestamp is
// ignored; a platform that requires timestamps signs StringToSignTimestamped.
//
// The signature is checked first: only a caller who holds the secret learns that the
// platform requires a timestamp, or what is wrong with it. Without X-Timestamp, such a
// platform's request is checked against the specification's form, and a right signature
// answers that the header is missing.
//
// Past the header checks, a failure costs the same whether or not the platform exists
// and whatever it requires: the HMACs the request calls for (one, or two with
// X-Timestamp; under a decoy key for an unknown id) and one store lookup that finds
// nothing, so response times do not tell which platform ids exist.
//
// Returns CodeUnauthorized for a missing header, an unknown platform, a platform of the
// other environment, or a wrong signature, without saying which beyond the missing
// header; and, past a right signature, for a timestamp that is missing, malformed or
// outside the service's window. AuthFailureOf tells the operator which.
func (s *Service) AuthenticatePlatformRequest(ctx context.Context, r PlatformRequest) (uuid.UUID, error) {
	id, failure, err := s.credentials.CheckPlatform(ctx, credentials.Request(r), credentials.Scope{Env: string(s.env), Window: s.window, Now: s.now})
	if failure != "" {
		return uuid.Nil, refuse(AuthFailure(failure))
	}
	return id, err
}

// AuthenticateAPIKey checks the user-API's X-Api-Key and X-Api-Secret headers and returns
// the user the key belongs to. As for platforms, a failure costs the same whether or not
// the key exists: the secret's hash compared with the key's (or a decoy's), and one store
// lookup that finds nothing.
//
// Returns CodeUnauthorized for a missing header, an unknown key, a key of the other
// environment, or a wrong secret, without saying which beyond the missing header.
// AuthFailureOf tells the operator which.
func (s *Service) AuthenticateAPIKey(ctx context.Context, apiKey, apiSecret string) (Caller, error) {
	k, failure, err := s.credentials.CheckAPIKey(ctx, apiKey, apiSecret, string(s.env))
	if failure != "" {
		return Caller{}, refuse(AuthFailure(failure))
	}
	return Caller{UserID: k.UserID, PlatformID: k.PlatformID}, err
}

// CreatePlatform registers a platform of the given environment (the service's own when
// empty) and issues its signing secret. At most one PlatformOptions may follow; without
// one, the platform signs by the specification's scheme.
//
// Returns CodeInvalid for an empty name, a name that is not text (see the "text" format),
// an unknown environment, or more than one PlatformOptions.
func (s *Service) CreatePlatform(ctx context.Context, name string, env Environment, opts ...PlatformOptions) (PlatformCredentials, error) {
	var opt PlatformOptions
	switch len(opts) {
	case 0:
	case 1:
		opt = opts[0]
	default:
		return PlatformCredentials{}, Errorf(CodeInvalid, "CreatePlatform takes at most one PlatformOptions, not %d.", len(opts))
	}
	if env == "" {
		env = s.env
	}
	if _, err := ParseEnvironment(string(env)); err != nil {
		return PlatformCredentials{}, err
	}
	if name == "" {
		return PlatformCredentials{}, Errorf(CodeInvalid, "A platform needs a name.")
	}
	if problem := validate.TextProblem(name); problem != "" {
		return PlatformCredentials{}, Errorf(CodeInvalid, "Invalid platform name: %s.", problem)
	}
	creds := PlatformCredentials{PlatformID: s.newID(), Secret: credentials.NewSecret(), Environment: env,
		RequireTimestamp: opt.RequireTimestamp}
	var requireTimestamp int64
	if opt.RequireTimestamp {
		requireTimestamp = 1
	}
	err := s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		return q.CreatePlatform(ctx, queries.CreatePlatformParams{
			ID:               creds.PlatformID.String(),
			Name:             name,
			Environment:      string(env),
			SecretSealed:     s.keys.Seal([]byte(creds.Secret), seal.PlatformSecretAAD(creds.PlatformID.String())),
			RequireTimestamp: requireTimestamp,
			CreatedAt:        formatTime(s.Now()),
		})
	})
	if err != nil {
		return PlatformCredentials{}, err
	}
	return creds, nil
}

// HasPlatforms reports whether any platform of the service's environment exists: whether
// anyone can call the platform endpoints yet.
func (s *Service) HasPlatforms(ctx context.Context) (bool, error) {
	var n int64
	err := s.query(ctx, func(q store.Querier) (err error) {
		n, err = q.CountPlatforms(ctx, string(s.env))
		return err
	})
	return n > 0, err
}

// CreateAPIKey issues a user-API key and secret for a user. It is an administrative
// operation: it is not scoped to a platform.
//
// Returns CodeInvalid for a malformed user id and CodeNotFound for an unknown user.
func (s *Service) CreateAPIKey(ctx context.Context, userID string) (APIKey, error) {
	uid, err := parseID(userID, "user")
	if err != nil {
		return APIKey{}, err
	}
	key := APIKey{APIKey: s.newID(), APISecret: credentials.NewSecret()}
	sum := sha256.Sum256([]byte(key.APISecret))
	err = s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		if _, err := q.GetUser(ctx, uid); err != nil {
			return notFound(err, "User not found.")
		}
		return q.CreateAPICredential(ctx, queries.CreateAPICredentialParams{
			ApiKey:     key.APIKey.String(),
			UserID:     uid,
			SecretHash: sum[:],
			CreatedAt:  formatTime(s.Now()),
		})
	})
	if err != nil {
		return APIKey{}, err
	}
	return key, nil
}

// parseID returns the canonical form of an administrative id argument.
func parseID(id, what string) (string, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return "", Errorf(CodeInvalid, "Invalid %s id %q.", what, id)
	}
	return u.String(), nil
}

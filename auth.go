package payments

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/queries"
)

// Authentication headers.
const (
	HeaderPlatformID = "X-Platform-ID"
	HeaderSignature  = "X-Signature"
	HeaderAPIKey     = "X-Api-Key"
	HeaderAPISecret  = "X-Api-Secret"
)

// Platform is a tenant: the company calling the platform endpoints for its users.
type Platform struct {
	ID          uuid.UUID   `json:"platform_id"`
	Name        string      `json:"name"`
	Environment Environment `json:"environment"`
	CreatedAt   time.Time   `json:"created_at"`
}

// PlatformCredentials is a new platform with its signing secret, shown once.
type PlatformCredentials struct {
	PlatformID  uuid.UUID   `json:"platform_id"`
	Secret      string      `json:"secret"`
	Environment Environment `json:"environment"`
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

// platformRecord is what authentication needs of a platform.
type platformRecord struct {
	env    Environment
	secret []byte
}

// StringToSign is the message a platform request's signature covers: the method, the
// request target exactly as sent (path and query), and the hex SHA-256 of the body.
func StringToSign(method, target string, body []byte) string {
	sum := sha256.Sum256(body)
	return method + target + hex.EncodeToString(sum[:])
}

// Sign returns the X-Signature of a platform request: hex HMAC-SHA256 of StringToSign
// under the platform's secret. Clients and the server use this same function.
func Sign(secret, method, target string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(StringToSign(method, target, body)))
	return hex.EncodeToString(mac.Sum(nil))
}

var errBadCredentials = &Error{Code: CodeUnauthorized, Message: "Invalid credentials."}

func missingHeader(name string) *Error {
	return Errorf(CodeUnauthorized, "Missing header %s.", name)
}

// AuthenticatePlatform checks a platform request's X-Platform-ID and X-Signature headers
// against the method, request target (path and query as sent) and body, and returns the
// platform's id.
//
// Returns CodeUnauthorized for a missing header, an unknown platform, a platform of the
// other environment, or a wrong signature, without saying which beyond the missing header.
func (s *Service) AuthenticatePlatform(ctx context.Context, platformID, signature, method, target string, body []byte) (uuid.UUID, error) {
	switch {
	case platformID == "":
		return uuid.Nil, missingHeader(HeaderPlatformID)
	case signature == "":
		return uuid.Nil, missingHeader(HeaderSignature)
	}
	id, err := uuid.Parse(platformID)
	if err != nil {
		return uuid.Nil, errBadCredentials
	}
	sig, err := hex.DecodeString(signature) // either case of hex digits
	if err != nil {
		return uuid.Nil, errBadCredentials
	}
	p, err := s.platform(ctx, id)
	if err != nil {
		return uuid.Nil, err
	}
	mac := hmac.New(sha256.New, p.secret)
	mac.Write([]byte(StringToSign(method, target, body)))
	if !hmac.Equal(mac.Sum(nil), sig) || p.env != s.env {
		return uuid.Nil, errBadCredentials
	}
	return id, nil
}

// platform returns the authentication record of a platform, from the cache when it has
// been seen before.
func (s *Service) platform(ctx context.Context, id uuid.UUID) (platformRecord, error) {
	if p, ok := s.platforms.Load(id); ok {
		return p.(platformRecord), nil
	}
	var p platformRecord
	err := s.read(ctx, func(q *queries.Queries) error {
		row, err := q.GetPlatform(ctx, id.String())
		if err != nil {
			return err
		}
		p = platformRecord{env: Environment(row.Environment), secret: []byte(row.Secret)}
		return nil
	})
	if errors.Is(err, sql.ErrNoRows) {
		return p, errBadCredentials
	}
	if err != nil {
		return p, err
	}
	s.platforms.Store(id, p)
	return p, nil
}

// AuthenticateAPIKey checks the user-API's X-Api-Key and X-Api-Secret headers and returns
// the user the key belongs to.
//
// Returns CodeUnauthorized for a missing header, an unknown key, a key of the other
// environment, or a wrong secret, without saying which beyond the missing header.
func (s *Service) AuthenticateAPIKey(ctx context.Context, apiKey, apiSecret string) (Caller, error) {
	switch {
	case apiKey == "":
		return Caller{}, missingHeader(HeaderAPIKey)
	case apiSecret == "":
		return Caller{}, missingHeader(HeaderAPISecret)
	}
	key, err := uuid.Parse(apiKey)
	if err != nil {
		return Caller{}, errBadCredentials
	}
	var row queries.GetAPICredentialRow
	err = s.read(ctx, func(q *queries.Queries) (err error) {
		row, err = q.GetAPICredential(ctx, key.String())
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Caller{}, errBadCredentials
	}
	if err != nil {
		return Caller{}, err
	}
	sum := sha256.Sum256([]byte(apiSecret))
	if subtle.ConstantTimeCompare(sum[:], row.SecretHash) != 1 || Environment(row.Environment) != s.env {
		return Caller{}, errBadCredentials
	}
	return Caller{UserID: uuid.MustParse(row.UserID), PlatformID: uuid.MustParse(row.PlatformID)}, nil
}

// CreatePlatform registers a platform of the given environment (the service's own when
// empty) and issues its signing secret.
//
// Returns CodeInvalid for an empty name or an unknown environment.
func (s *Service) CreatePlatform(ctx context.Context, name string, env Environment) (PlatformCredentials, error) {
	if env == "" {
		env = s.env
	}
	if _, err := ParseEnvironment(string(env)); err != nil {
		return PlatformCredentials{}, err
	}
	if name == "" {
		return PlatformCredentials{}, Errorf(CodeInvalid, "A platform needs a name.")
	}
	creds := PlatformCredentials{PlatformID: s.newID(), Secret: randomSecret(), Environment: env}
	err := s.write(ctx, func(q *queries.Queries) error {
		return q.CreatePlatform(ctx, queries.CreatePlatformParams{
			ID:          creds.PlatformID.String(),
			Name:        name,
			Environment: string(env),
			Secret:      creds.Secret,
			CreatedAt:   formatTime(s.Now()),
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
	err := s.read(ctx, func(q *queries.Queries) (err error) {
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
	key := APIKey{APIKey: s.newID(), APISecret: randomSecret()}
	sum := sha256.Sum256([]byte(key.APISecret))
	err = s.write(ctx, func(q *queries.Queries) error {
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

// randomSecret returns 256 random bits as hex. Secrets are random, not chosen by people,
// so one SHA-256 is a sufficient hash for storing them.
func randomSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // never returns an error (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}

// parseID returns the canonical form of an administrative id argument.
func parseID(id, what string) (string, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return "", Errorf(CodeInvalid, "Invalid %s id %q.", what, id)
	}
	return u.String(), nil
}

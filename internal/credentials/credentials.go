// Package credentials reads what authentication needs of platforms and API keys: read
// once from the store (secrets opened), then cached, since neither ever changes; an
// unknown platform id or API key gets a decoy, so that it costs what a known one does.
package credentials

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/cache"
	"github.com/platform-payments/payments/internal/platformsig"
	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// maxCached bounds each cache: about 200 bytes an entry.
const maxCached = 100_000

// Platform is what authentication needs of a platform.
type Platform struct {
	Known            bool // false: the decoy that stands in for an unknown id
	Env              string
	RequireTimestamp bool
	MACs             *platformsig.MACs // HMAC-SHA256 under the platform's secret
}

// APIKey is what authentication needs of an API key.
type APIKey struct {
	Known              bool // false: the decoy that stands in for an unknown key
	SecretHash         []byte
	Env                string
	UserID, PlatformID uuid.UUID
}

// Credentials are the platforms and API keys of a service, as authentication reads them.
// It is safe for concurrent use.
type Credentials struct {
	query     func(ctx context.Context, fn func(q store.Querier) error) error
	keys      *seal.Keyring
	platforms *cache.Bounded[uuid.UUID, Platform]
	apiKeys   *cache.Bounded[uuid.UUID, APIKey]

	// The decoys: a platform record whose key is as long as a real secret, and a
	// secret's hash, both of a random secret no one holds; a sealed secret as long as a
	// platform's, opened in place of one; and a random mask that turns a known id into
	// one that is not.
	decoy       Platform
	decoyHash   [sha256.Size]byte
	decoySealed string
	decoyAAD    string
	mask        uuid.UUID
}

// New returns the credentials read with query, whose platform secrets keys open.
func New(query func(ctx context.Context, fn func(q store.Querier) error) error, keys *seal.Keyring) *Credentials {
	secret := NewSecret()
	c := &Credentials{
		query:     query,
		keys:      keys,
		platforms: cache.New[uuid.UUID, Platform](maxCached),
		apiKeys:   cache.New[uuid.UUID, APIKey](maxCached),
		decoy:     Platform{MACs: platformsig.NewMACs([]byte(secret))},
		decoyHash: sha256.Sum256([]byte(secret)),
		decoyAAD:  seal.PlatformSecretAAD(uuid.NewString()),
		mask:      uuid.New(),
	}
	c.decoySealed = keys.Seal([]byte(NewSecret()), c.decoyAAD)
	return c
}

// NewSecret returns 256 random bits as hex. Secrets are random, not chosen by people,
// so one SHA-256 is a sufficient hash for storing them.
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // never returns an error (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}

// Platform returns the platform's record, from the cache (cached) or the store.
func (c *Credentials) Platform(ctx context.Context, id uuid.UUID) (p Platform, cached bool, err error) {
	if p, ok := c.platforms.Get(id); ok {
		return p, true, nil
	}
	p, err = c.LoadPlatform(ctx, id)
	return p, false, err
}

// LoadPlatform reads a platform's record from the store and caches it. An unknown id gets
// the decoy record, which no signature matches.
func (c *Credentials) LoadPlatform(ctx context.Context, id uuid.UUID) (Platform, error) {
	var row queries.Platform
	err := c.query(ctx, func(q store.Querier) (err error) {
		row, err = q.GetPlatform(ctx, id.String())
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		// What opening a found platform's sealed secret costs: it is not to tell them apart.
		if _, err := c.keys.Open(c.decoySealed, c.decoyAAD); err != nil {
			return Platform{}, err
		}
		return c.decoy, nil
	}
	if err != nil {
		return Platform{}, err
	}
	secret, err := c.keys.Open(row.SecretSealed, seal.PlatformSecretAAD(row.ID))
	if err != nil {
		return Platform{}, fmt.Errorf("payments: secret of platform %s: %w", row.ID, err)
	}
	p := Platform{Known: true, Env: row.Environment, MACs: platformsig.NewMACs(secret),
		RequireTimestamp: row.RequireTimestamp != 0}
	c.platforms.Put(id, p)
	return p, nil
}

// APIKey returns the API key's credential, from the cache (cached) or the store.
func (c *Credentials) APIKey(ctx context.Context, key uuid.UUID) (k APIKey, cached bool, err error) {
	if k, ok := c.apiKeys.Get(key); ok {
		return k, true, nil
	}
	k, err = c.LoadAPIKey(ctx, key)
	return k, false, err
}

// LoadAPIKey reads an API key's credential from the store and caches it. An unknown key
// gets the decoy, whose hash no secret has.
func (c *Credentials) LoadAPIKey(ctx context.Context, key uuid.UUID) (APIKey, error) {
	var row queries.GetAPICredentialRow
	err := c.query(ctx, func(q store.Querier) (err error) {
		row, err = q.GetAPICredential(ctx, key.String())
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return APIKey{SecretHash: c.decoyHash[:]}, nil
	}
	if err != nil {
		return APIKey{}, err
	}
	k := APIKey{
		Known: true, SecretHash: row.SecretHash, Env: row.Environment,
		UserID: uuid.MustParse(row.UserID), PlatformID: uuid.MustParse(row.PlatformID),
	}
	c.apiKeys.Put(key, k)
	return k, nil
}

// Absent returns an id that no platform or key has (but for a chance of 2^-122), as far
// from id in the store's index as a random id would be: the lookup a cached credential
// spares, made when it fails, so that a failure costs what an unknown id's does.
func (c *Credentials) Absent(id uuid.UUID) uuid.UUID {
	for i := range id {
		id[i] ^= c.mask[i]
	}
	return id
}

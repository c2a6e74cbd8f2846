// Package seal encrypts the values the payments service keeps secret at rest (platform
// secrets, bank account numbers, the stored outcomes of idempotent requests) and computes the
// blind index by which a bank account number is found without being opened.
//
// A data key ([Key]) is 32 random bytes held by the operator, never stored with the values.
// From it HKDF-SHA256 derives, each under a label of its own, the AES-256-GCM key that seals
// values and the key's id. A sealed value is text:
//
//	v1:<key id: 16 hex digits>:<base64 (standard, unpadded) of nonce || ciphertext || tag>
//
// with a random 12-byte nonce for every value and a 16-byte tag. The key id is there so that
// a [Keyring] of several keys (during a key rotation) opens each value with the key that
// sealed it; the decoding is strict, so a sealed value has one text.
//
// Each value is sealed bound to associated data its caller gives: the value's column and the
// id of its row, such as "bank_accounts.account_number:<id>". The associated data is
// authenticated with the value but not stored, so a sealed value copied to another row or
// another column (by a bug, or by whoever can write to the database but has no key) does not
// open there: a secret cannot be moved to where another user or platform would read it. The
// header "v1:<key id>:" is authenticated too.
//
// Keys never print: a [Key]'s String, every fmt verb and its slog value show only its id, and
// the errors of [ParseKey] and [ReadKeyFile] never quote the text they read.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
)

// HKDF labels: each derived key has its own, so no two are ever equal. They are part of
// every stored value: changing one makes the stored values unreadable.
const (
	labelSealKey    = "payments v1 AES-256-GCM sealing key"
	labelKeyID      = "payments v1 data key id"
	labelBlindIndex = "payments v1 blind index bank_accounts.account_number"
)

// The header of a sealed value: "v1:" + key id (16 hex digits) + ":".
const (
	version      = "v1"
	keyIDBytes   = 8
	keyIDLength  = 2 * keyIDBytes
	headerLength = len(version) + 1 + keyIDLength + 1 // "v1:0123456789abcdef:"
)

var (
	errNotSealed  = errors.New("stored value is not sealed")
	errUnsealable = errors.New("stored value does not open: damaged, moved from another row, or not sealed under this key")
)

// derive returns n bytes derived from secret for one purpose (label).
func derive(secret []byte, label string, n int) []byte {
	b, err := hkdf.Key(sha256.New, secret, nil, label, n)
	if err != nil { // only for n beyond 255 hash lengths
		panic(err)
	}
	return b
}

// sealKey is one data key, ready to seal and open.
type sealKey struct {
	id   string
	aead cipher.AEAD
}

func newSealKey(k Key) *sealKey {
	key := derive(k.key[:], labelSealKey, 32)
	block, err := aes.NewCipher(key)
	clear(key)
	if err != nil { // only for a key length other than 16, 24 or 32
		panic(err)
	}
	aead, err := cipher.NewGCM(block) // 12-byte random nonces, 16-byte tags
	if err != nil {
		panic(err)
	}
	return &sealKey{id: k.ID(), aead: aead}
}

// Keyring holds the configured data keys, the newest first: it seals under the newest and
// opens a value with whichever key's id the value carries. It never changes once made, so
// it is safe for concurrent use.
type Keyring struct {
	keys []*sealKey
}

// NewKeyring returns a keyring of keys, the newest (the one to seal with) first. It fails
// for no key, a zero key or a key given twice.
func NewKeyring(keys []Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("no data key")
	}
	r := &Keyring{}
	for _, k := range keys {
		if k.isZero() {
			return nil, errZeroKey
		}
		sk := newSealKey(k)
		if r.byID(sk.id) != nil {
			return nil, fmt.Errorf("data key %s is given twice", sk.id)
		}
		r.keys = append(r.keys, sk)
	}
	return r, nil
}

// SealingID is the id of the key new values are sealed under: the newest.
func (r *Keyring) SealingID() string { return r.keys[0].id }

// IDs returns the ids of the ring's keys, the newest first.
func (r *Keyring) IDs() []string {
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.id
	}
	return ids
}

// Has reports whether the ring holds the key of id.
func (r *Keyring) Has(id string) bool { return r.byID(id) != nil }

func (r *Keyring) byID(id string) *sealKey {
	for _, k := range r.keys {
		if k.id == id {
			return k
		}
	}
	return nil
}

// Seal encrypts plain under the newest key, bound to aad (the value's column and row, so
// that a sealed value copied to another row or column does not open there), with a new
// random nonce: "v1:" + key id + ":" + base64(nonce || ciphertext || tag).
func (r *Keyring) Seal(plain []byte, aad string) string {
	k := r.keys[0]
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	rand.Read(nonce) // never returns an error (crypto/rand, Go 1.24+)
	return k.seal(nonce, plain, aad)
}

// seal is Seal with the nonce given; the ciphertext is appended to it (in its array, when
// there is room, as Seal makes it).
func (k *sealKey) seal(nonce, plain []byte, aad string) string {
	header := version + ":" + k.id + ":"
	out := k.aead.Seal(nonce, nonce, plain, []byte(header+aad))
	return header + base64.RawStdEncoding.EncodeToString(out)
}

// Open decrypts a value sealed under any of the ring's keys with the same aad. Its errors
// never show the value: a value that is not sealed, one that does not open (damaged, moved
// from another row or column, or sealed under another key of the same id), and one sealed
// under a key the ring does not hold, which is [ErrMissingKey].
func (r *Keyring) Open(sealed, aad string) ([]byte, error) {
	id, ok := SealedBy(sealed)
	if !ok {
		return nil, errNotSealed
	}
	k := r.byID(id)
	if k == nil {
		return nil, fmt.Errorf("stored value is sealed under data key %s, which is not configured: %w", id, ErrMissingKey)
	}
	// Strict: one text per ciphertext (bits past the last byte must be zero).
	raw, err := base64.RawStdEncoding.Strict().DecodeString(sealed[headerLength:])
	if err != nil || len(raw) < k.aead.NonceSize()+k.aead.Overhead() {
		return nil, errUnsealable
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(nil, raw[:n], raw[n:], []byte(sealed[:headerLength]+aad))
	if err != nil {
		return nil, errUnsealable
	}
	return plain, nil
}

// SealedBy returns the id of the key a sealed value was sealed under; ok is false when the
// value is not sealed (a plain value of a database written before sealing, say).
func SealedBy(sealed string) (keyID string, ok bool) {
	if len(sealed) < headerLength || sealed[:len(version)+1] != version+":" || sealed[headerLength-1] != ':' {
		return "", false
	}
	id := sealed[len(version)+1 : headerLength-1]
	if _, err := hex.DecodeString(id); err != nil {
		return "", false
	}
	return id, true
}

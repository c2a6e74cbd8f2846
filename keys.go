package payments

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Data keys and sealing. A data key is 32 random bytes held by the operator, never stored
// in the database. From it HKDF-SHA256 derives the AES-256-GCM key that seals values and
// the key's id; the blind-index key is a separate random key, stored sealed (see
// keystore.go), so an account number's index does not change when the data key does.

// DataKeySize is the length of a data key in bytes.
const DataKeySize = 32

// HKDF labels: each derived key has its own, so no two are ever equal.
const (
	labelSealKey    = "payments v1 AES-256-GCM sealing key"
	labelKeyID      = "payments v1 data key id"
	labelBlindIndex = "payments v1 blind index bank_accounts.account_number"
)

// sealedPrefix starts every sealed value: "v1:" + key id (16 hex digits) + ":" + base64.
const (
	sealedVersion = "v1"
	keyIDBytes    = 8
	keyIDLength   = 2 * keyIDBytes
	sealedHeader  = len(sealedVersion) + 1 + keyIDLength + 1 // "v1:0123456789abcdef:"
)

// Errors about data keys, for errors.Is; the messages that wrap them name the key ids.
var (
	// ErrWrongDataKey: the configured data key is not a key of the database.
	ErrWrongDataKey = errors.New("the data key does not match this database")
	// ErrMissingDataKey: values of the database are sealed under a key not configured.
	ErrMissingDataKey = errors.New("a data key of this database is not configured")
	// ErrRetiredDataKey: the key given to seal with was retired by a rotation.
	ErrRetiredDataKey = errors.New("the data key was retired by a key rotation")
)

var (
	errNotSealed  = errors.New("stored value is not sealed")
	errUnsealable = errors.New("stored value does not open: damaged, moved from another row, or not sealed under this key")
)

// DataKey is a 256-bit key that sealed values are encrypted under. Its printed forms
// (String, fmt verbs, slog) show only its id, never the key.
type DataKey struct {
	key [DataKeySize]byte
}

// NewDataKey returns a new random data key.
func NewDataKey() DataKey {
	var k DataKey
	rand.Read(k.key[:]) // never returns an error (crypto/rand, Go 1.24+)
	return k
}

// ParseDataKey reads a data key written as standard base64 of 32 bytes (as
// `openssl rand -base64 32` prints it); surrounding white space is ignored.
func ParseDataKey(text string) (DataKey, error) {
	text = strings.TrimSpace(text)
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil { // the decoder's message would show where the text is bad: keep it out
		return DataKey{}, errors.New("a data key is the base64 of 32 bytes: not base64")
	}
	var k DataKey
	if len(b) != DataKeySize {
		return DataKey{}, fmt.Errorf("a data key is the base64 of 32 bytes, not %d", len(b))
	}
	copy(k.key[:], b)
	clear(b)
	if k.isZero() {
		return DataKey{}, errors.New("a data key of 32 zero bytes is not a key")
	}
	return k, nil
}

func (k DataKey) isZero() bool { return k.key == [DataKeySize]byte{} }

// ID returns the key's id: 16 hex digits derived from the key (not a hash that could be
// checked against a guess of the key alone: HKDF with a label of its own). Sealed values
// carry it, so that each is opened with the key that sealed it.
func (k DataKey) ID() string {
	return hex.EncodeToString(derive(k.key[:], labelKeyID, keyIDBytes))
}

// String returns "DataKey(ID)": never the key itself.
func (k DataKey) String() string { return "DataKey(" + k.ID() + ")" }

// Format prints String for every verb, so that %x or %d cannot print the key's bytes.
func (k DataKey) Format(f fmt.State, _ rune) { fmt.Fprint(f, k.String()) }

// LogValue logs the key's id only.
func (k DataKey) LogValue() slog.Value { return slog.StringValue(k.String()) }

// DefaultKeyFile is the key file Open uses when no data key is given: for a SQLite file,
// its path with ".key" appended; for a PostgreSQL database, "postgres-NAME.key" in the
// working directory, NAME the database's, so that the instances started in one directory
// share it (instances on other machines are given the key: DataKeys, or KeyFile).
func DefaultKeyFile(dsn string) string {
	e, err := engineFor(dsn)
	if err != nil {
		return dsn + ".key"
	}
	return e.DefaultKeyFile(dsn)
}

// ReadKeyFile reads a data key file: the key in base64, as WriteKeyFile writes it.
func ReadKeyFile(path string) (DataKey, error) {
	b, err := os.ReadFile(path) // #nosec G304 -- the operator names the key file
	if err != nil {
		return DataKey{}, fmt.Errorf("data key file: %w", err)
	}
	k, err := ParseDataKey(string(b))
	clear(b)
	if err != nil {
		return DataKey{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return k, nil
}

// WriteKeyFile writes k to a new file at path, readable by its owner only (mode 0600), and
// makes it durable before returning: values sealed under a key must never outlive it. It
// fails if path exists.
func WriteKeyFile(path string, k DataKey) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("data key file: %w", err)
	}
	defer func() { // the key lives on at path, if anywhere
		if rerr := os.Remove(tmp.Name()); err == nil && rerr != nil {
			err = fmt.Errorf("data key file: %w", rerr)
		}
	}()
	werr := tmp.Chmod(0o600)
	if werr == nil {
		_, werr = tmp.WriteString(base64.StdEncoding.EncodeToString(k.key[:]) + "\n")
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("data key file: %w", werr)
	}
	// A hard link, unlike a rename, never replaces a file already there.
	if err := os.Link(tmp.Name(), path); err != nil {
		return fmt.Errorf("data key file: %w", err)
	}
	d, err := os.Open(dir) // #nosec G304 -- the directory of the operator's key file
	if err != nil {
		return fmt.Errorf("data key file: %w", err)
	}
	serr := d.Sync()
	if cerr := d.Close(); serr == nil {
		serr = cerr
	}
	if serr != nil {
		return fmt.Errorf("data key file: sync %s: %w", dir, serr)
	}
	return nil
}

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

func newSealKey(k DataKey) *sealKey {
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

// keyring holds the configured data keys, the newest first: it seals under the newest
// and opens a value with whichever key's id the value carries. It never changes once
// made, so it is safe for concurrent use.
type keyring struct {
	keys []*sealKey
}

func newKeyring(keys []DataKey) (*keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("no data key")
	}
	r := &keyring{}
	for _, k := range keys {
		if k.isZero() {
			return nil, errors.New("a data key of 32 zero bytes is not a key")
		}
		sk := newSealKey(k)
		if r.byID(sk.id) != nil {
			return nil, fmt.Errorf("data key %s is given twice", sk.id)
		}
		r.keys = append(r.keys, sk)
	}
	return r, nil
}

// writeID is the id of the key new values are sealed under.
func (r *keyring) writeID() string { return r.keys[0].id }

func (r *keyring) byID(id string) *sealKey {
	for _, k := range r.keys {
		if k.id == id {
			return k
		}
	}
	return nil
}

// seal encrypts plain under the newest key, bound to aad (the value's column and row, so
// that a sealed value copied to another row or column does not open there), with a new
// random nonce: "v1:" + key id + ":" + base64(nonce || ciphertext || tag).
func (r *keyring) seal(plain []byte, aad string) string {
	return r.keys[0].seal(plain, aad)
}

func (k *sealKey) seal(plain []byte, aad string) string {
	header := sealedVersion + ":" + k.id + ":"
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	rand.Read(nonce) // never returns an error (crypto/rand, Go 1.24+)
	out := k.aead.Seal(nonce, nonce, plain, []byte(header+aad))
	return header + base64.RawStdEncoding.EncodeToString(out)
}

// open decrypts a value sealed under any of the ring's keys with the same aad.
func (r *keyring) open(sealed, aad string) ([]byte, error) {
	id, ok := sealedKeyID(sealed)
	if !ok {
		return nil, errNotSealed
	}
	k := r.byID(id)
	if k == nil {
		return nil, fmt.Errorf("stored value is sealed under data key %s, which is not configured: %w", id, ErrMissingDataKey)
	}
	// Strict: one text per ciphertext (bits past the last byte must be zero).
	raw, err := base64.RawStdEncoding.Strict().DecodeString(sealed[sealedHeader:])
	if err != nil || len(raw) < k.aead.NonceSize()+k.aead.Overhead() {
		return nil, errUnsealable
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(nil, raw[:n], raw[n:], []byte(sealed[:sealedHeader]+aad))
	if err != nil {
		return nil, errUnsealable
	}
	return plain, nil
}

// sealedKeyID returns the id of the key a sealed value was sealed under.
func sealedKeyID(sealed string) (string, bool) {
	if len(sealed) < sealedHeader || sealed[:len(sealedVersion)+1] != sealedVersion+":" || sealed[sealedHeader-1] != ':' {
		return "", false
	}
	id := sealed[len(sealedVersion)+1 : sealedHeader-1]
	if _, err := hex.DecodeString(id); err != nil {
		return "", false
	}
	return id, true
}

// The associated data of each sealed column: the column and the row's key.
func platformSecretAAD(id string) string     { return "platforms.secret:" + id }
func bankAccountNumberAAD(id string) string  { return "bank_accounts.account_number:" + id }
func payeeBankNumberAAD(id string) string    { return "payee_banks.account_number:" + id }
func idempotencyOutcomeAAD(id string) string { return "idempotency_keys.outcome:" + id }
func keyCheckAAD(id string) string           { return "data_keys.key_check:" + id }

const blindIndexKeyAAD = "blind_index_key.key:1"

// keyCheckText is what data_keys.key_check holds, sealed under its key.
const keyCheckText = "payments data key check v1"

// blindIndex computes the blind index of account numbers: HMAC-SHA256 under a key derived
// from the database's blind-index key, which is not any data key and does not change
// when they do.
type blindIndex struct {
	key []byte
}

func newBlindIndex(root []byte) *blindIndex {
	return &blindIndex{key: derive(root, labelBlindIndex, 32)}
}

// bankAccount returns the index of a linked account number: the user and the routing
// number are in the message too, so equal numbers of different users or banks do not
// share an index. The number is used as validated (digits only, nothing to normalise):
// two numbers are the same account when they are the same digits, as before sealing.
func (b *blindIndex) bankAccount(userID, routingNumber, accountNumber string) []byte {
	mac := hmac.New(sha256.New, b.key)
	mac.Write([]byte(userID + "\x00" + routingNumber + "\x00" + accountNumber))
	return mac.Sum(nil)
}

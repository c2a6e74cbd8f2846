package seal

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length of a data key in bytes.
const KeySize = 32

// Errors about data keys, for errors.Is; the messages that wrap them name the key ids.
// Open returns ErrMissingKey; the others are for the checks of a database's keys.
var (
	// ErrWrongKey: the configured data key is not a key of the database.
	ErrWrongKey = errors.New("the data key does not match this database")
	// ErrMissingKey: values of the database are sealed under a key not configured.
	ErrMissingKey = errors.New("a data key of this database is not configured")
	// ErrRetiredKey: the key given to seal with was retired by a rotation.
	ErrRetiredKey = errors.New("the data key was retired by a key rotation")
)

var errZeroKey = errors.New("a data key of 32 zero bytes is not a key")

// Key is a 256-bit data key that sealed values are encrypted under (the root package's
// DataKey). Its printed forms (String, fmt verbs, slog) show only its id, never the key.
// The zero Key is no key: NewKeyring refuses it.
type Key struct {
	key [KeySize]byte
}

// NewKey returns a new random data key.
func NewKey() Key {
	var k Key
	rand.Read(k.key[:]) // never returns an error (crypto/rand, Go 1.24+)
	return k
}

// ParseKey reads a data key written as standard base64 of 32 bytes (as
// `openssl rand -base64 32` prints it); surrounding white space is ignored.
func ParseKey(text string) (Key, error) {
	text = strings.TrimSpace(text)
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil { // the decoder's message would show where the text is bad: keep it out
		return Key{}, errors.New("a data key is the base64 of 32 bytes: not base64")
	}
	var k Key
	if len(b) != KeySize {
		return Key{}, fmt.Errorf("a data key is the base64 of 32 bytes, not %d", len(b))
	}
	copy(k.key[:], b)
	clear(b)
	if k.isZero() {
		return Key{}, errZeroKey
	}
	return k, nil
}

func (k Key) isZero() bool { return k.key == [KeySize]byte{} }

// text is the key as ParseKey reads it: the one form in which a key is ever written out.
func (k Key) text() string { return base64.StdEncoding.EncodeToString(k.key[:]) }

// ID returns the key's id: 16 hex digits derived from the key (not a hash that could be
// checked against a guess of the key alone: HKDF with a label of its own). Sealed values
// carry it, so that each is opened with the key that sealed it.
func (k Key) ID() string {
	return hex.EncodeToString(derive(k.key[:], labelKeyID, keyIDBytes))
}

// String returns "DataKey(ID)": never the key itself.
func (k Key) String() string { return "DataKey(" + k.ID() + ")" }

// Format prints String for every verb, so that %x or %d cannot print the key's bytes.
func (k Key) Format(f fmt.State, _ rune) { fmt.Fprint(f, k.String()) }

// LogValue logs the key's id only.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// ReadKeyFile reads a data key file: the key in base64, as WriteKeyFile writes it.
func ReadKeyFile(path string) (Key, error) {
	b, err := os.ReadFile(path) // #nosec G304 -- the operator names the key file
	if err != nil {
		return Key{}, fmt.Errorf("data key file: %w", err)
	}
	k, err := ParseKey(string(b))
	clear(b)
	if err != nil {
		return Key{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return k, nil
}

// WriteKeyFile writes k to a new file at path, readable by its owner only (mode 0600), and
// makes it durable before returning: values sealed under a key must never outlive it. It
// fails if path exists.
func WriteKeyFile(path string, k Key) (err error) {
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
		_, werr = tmp.WriteString(k.text() + "\n")
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

package payments

import (
	"github.com/platform-payments/payments/internal/datakeys"
	"github.com/platform-payments/payments/internal/seal"
)

// Data keys and sealing. A data key is 32 random bytes held by the operator, never stored
// in the database; package internal/seal seals values under it and computes the blind
// index of account numbers, whose key is a separate random key stored sealed, so that an
// index does not change when the data key does; package internal/datakeys sets the keys
// up, rotates and reports them (Service.DataKeys). Here: their API under the names
// callers use, and what each sealed value is bound to.

// DataKeySize is the length of a data key in bytes.
const DataKeySize = seal.KeySize

// Errors about data keys, for errors.Is; the messages that wrap them name the key ids.
var (
	// ErrWrongDataKey: the configured data key is not a key of the database.
	ErrWrongDataKey = seal.ErrWrongKey
	// ErrMissingDataKey: values of the database are sealed under a key not configured.
	ErrMissingDataKey = seal.ErrMissingKey
	// ErrRetiredDataKey: the key given to seal with was retired by a rotation.
	ErrRetiredDataKey = seal.ErrRetiredKey
)

// DataKey is a 256-bit key that sealed values are encrypted under. Its printed forms
// (String, fmt verbs, slog) show only its id, never the key.
type DataKey = seal.Key

// NewDataKey returns a new random data key.
func NewDataKey() DataKey { return seal.NewKey() }

// ParseDataKey reads a data key written as standard base64 of 32 bytes (as
// `openssl rand -base64 32` prints it); surrounding white space is ignored.
func ParseDataKey(text string) (DataKey, error) { return seal.ParseKey(text) }

// DefaultKeyFile is the key file Open uses when no data key is given: for a SQLite file,
// its path with ".key" appended; for a PostgreSQL database, "postgres-NAME.key" in the
// working directory, NAME the database's, so that the instances started in one directory
// share it (instances on other machines are given the key: DataKeys, or KeyFile).
//
// A DSN no engine takes (which Open refuses) has none: "".
func DefaultKeyFile(dsn string) string {
	e, err := engineFor(dsn)
	if err != nil {
		return ""
	}
	return e.DefaultKeyFile(dsn)
}

// ReadKeyFile reads a data key file: the key in base64, as WriteKeyFile writes it.
func ReadKeyFile(path string) (DataKey, error) { return seal.ReadKeyFile(path) }

// WriteKeyFile writes k to a new file at path, readable by its owner only (mode 0600), and
// makes it durable before returning: values sealed under a key must never outlive it. It
// fails if path exists.
func WriteKeyFile(path string, k DataKey) error { return seal.WriteKeyFile(path, k) }

// RotateOptions tunes a key rotation, DataKeys().Rotate.
type RotateOptions = datakeys.RotateOptions

// Rotation is what a key rotation did.
type Rotation = datakeys.Rotation

// DataKeyInfo describes a data key of the database, as DataKeys().List reports it.
type DataKeyInfo = datakeys.Info

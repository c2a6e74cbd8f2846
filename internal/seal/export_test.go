package seal

// Internals the external tests use.

// The errors of Open besides ErrMissingKey.
var (
	ErrNotSealed  = errNotSealed
	ErrUnsealable = errUnsealable
)

// NonceSize is the length of the random nonce that starts a sealed value's bytes.
const NonceSize = 12

// SealWithNonce seals plain as Seal does, under the ring's key of keyID, with the nonce
// given instead of a random one ("" when the ring has no such key).
func SealWithNonce(r *Keyring, keyID string, nonce, plain []byte, aad string) string {
	k := r.byID(keyID)
	if k == nil {
		return ""
	}
	return k.seal(append([]byte(nil), nonce...), plain, aad)
}

// KeyText is the key as WriteKeyFile writes it (without the newline).
func KeyText(k Key) string { return k.text() }

// Package webhook holds what sending and receiving webhooks rest on, with no database:
// Standard Webhooks v1.0.0 signatures (v1 under whsec_ secrets, v1a under ed25519 keys;
// Sign, Verify), the rules an endpoint's URL
// obeys, the retry schedule of a delivery, and a dialer that connects only to addresses
// allowed at the moment of connecting (the HTTP client over it is package egress).
package webhook

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// Secret sizes. NewSecret makes secrets of SecretSize bytes; ParseSecret accepts the
// range the specification allows, so that a receiver can verify any sender's secret.
const (
	SecretSize    = 32
	MinSecretSize = 24
	MaxSecretSize = 64
)

// The prefixes of the Standard Webhooks key texts: a symmetric secret (signatures v1), an
// ed25519 private key and an ed25519 public key (signatures v1a).
const (
	secretPrefix  = "whsec_"
	privatePrefix = "whsk_"
	publicPrefix  = "whpk_"
)

// DefaultTolerance is how far a delivery's timestamp may be from the receiver's clock,
// either way, when Verify is given no tolerance.
const DefaultTolerance = 5 * time.Minute

// The headers of a delivery, as the specification names them (matched in any case).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Errors of ParseSecret and Verify, for errors.Is; the messages that wrap them say more,
// never showing a secret.
var (
	// ErrInvalidSecret: the text is not a whsec_ secret, a whsk_ key or a whpk_ key.
	ErrInvalidSecret = errors.New("invalid webhook secret")
	// ErrMissingHeader: webhook-id, webhook-timestamp or webhook-signature is absent or empty.
	ErrMissingHeader = errors.New("missing webhook header")
	// ErrInvalidHeader: a webhook header is given twice, or the timestamp is not whole
	// Unix seconds written as Sign writes them.
	ErrInvalidHeader = errors.New("invalid webhook header")
	// ErrTimestampTooOld: the timestamp is further in the past than the tolerance.
	ErrTimestampTooOld = errors.New("webhook timestamp too old")
	// ErrTimestampTooNew: the timestamp is further in the future than the tolerance.
	ErrTimestampTooNew = errors.New("webhook timestamp too new")
	// ErrNoMatchingSignature: no signature of the header (v1 for a whsec_ secret, v1a for
	// a whsk_ or whpk_ key) is the body's under the key.
	ErrNoMatchingSignature = errors.New("no matching webhook signature")
)

// Secret is an endpoint's signing key: a symmetric secret (whsec_, signing v1), an ed25519
// private key (whsk_, signing v1a) or, to verify only, an ed25519 public key (whpk_). Its
// printed forms (String, fmt verbs) never show a private key: Text is the one way to
// write it out. The zero Secret is no secret: Sign refuses it and Verify matches nothing
// under it.
type Secret struct {
	key  []byte // the HMAC key, an ed25519.PrivateKey or an ed25519.PublicKey
	kind keyKind
}

// keyKind says what a Secret's key is.
type keyKind uint8

const (
	kindHMAC    keyKind = iota // whsec_: signs and verifies v1
	kindPrivate                // whsk_: signs v1a, verifies with its public half
	kindPublic                 // whpk_: verifies v1a
)

// NewSecret returns a new random secret of SecretSize bytes.
func NewSecret() Secret {
	key := make([]byte, SecretSize)
	rand.Read(key) // never returns an error (crypto/rand, Go 1.24+)
	return Secret{key: key}
}

// NewKey returns a new signing key: an ed25519 private key when asymmetric, else a
// secret as NewSecret makes.
func NewKey(asymmetric bool) Secret {
	if !asymmetric {
		return NewSecret()
	}
	_, private, _ := ed25519.GenerateKey(nil) // crypto/rand never fails (Go 1.24+)
	return Secret{key: private, kind: kindPrivate}
}

// ParseSecret reads a key written as Text writes it, surrounding white space ignored:
// "whsec_" and the standard, padded base64 of a secret of 24 to 64 bytes; "whsk_" and the
// base64 of an ed25519 private key (its 32-byte seed, or the 64 bytes of seed and public
// key); or "whpk_" and the base64 of a 32-byte ed25519 public key. Any other text is
// refused with an error that wraps ErrInvalidSecret and does not show the text.
func ParseSecret(text string) (Secret, error) {
	text = strings.TrimSpace(text)
	prefix, kind := secretPrefix, kindHMAC
	switch {
	case strings.HasPrefix(text, privatePrefix):
		prefix, kind = privatePrefix, kindPrivate
	case strings.HasPrefix(text, publicPrefix):
		prefix, kind = publicPrefix, kindPublic
	case !strings.HasPrefix(text, secretPrefix):
		return Secret{}, fmt.Errorf("%w: it does not start with %s, %s or %s", ErrInvalidSecret, secretPrefix, privatePrefix, publicPrefix)
	}
	encoded := text[len(prefix):]
	// The decoder skips line breaks; a key has none.
	if strings.ContainsAny(encoded, "\r\n") {
		return Secret{}, fmt.Errorf("%w: not standard base64 after %s", ErrInvalidSecret, prefix)
	}
	key, err := base64.StdEncoding.Strict().DecodeString(encoded)
	if err != nil { // the decoder's message would show where the text is bad: keep it out
		return Secret{}, fmt.Errorf("%w: not standard base64 after %s", ErrInvalidSecret, prefix)
	}
	switch kind {
	case kindPrivate:
		return parsePrivate(key)
	case kindPublic:
		if len(key) != ed25519.PublicKeySize {
			return Secret{}, fmt.Errorf("%w: %d bytes after %s, not %d", ErrInvalidSecret, len(key), publicPrefix, ed25519.PublicKeySize)
		}
		return Secret{key: key, kind: kindPublic}, nil
	}
	if len(key) < MinSecretSize || len(key) > MaxSecretSize {
		return Secret{}, fmt.Errorf("%w: %d bytes, not %d to %d", ErrInvalidSecret, len(key), MinSecretSize, MaxSecretSize)
	}
	return Secret{key: key}, nil
}

// parsePrivate reads the bytes of a whsk_ key: a seed, or a seed and its public key.
func parsePrivate(key []byte) (Secret, error) {
	switch len(key) {
	case ed25519.SeedSize:
		return Secret{key: ed25519.NewKeyFromSeed(key), kind: kindPrivate}, nil
	case ed25519.PrivateKeySize:
		private := ed25519.NewKeyFromSeed(key[:ed25519.SeedSize])
		if !bytes.Equal(private, key) {
			return Secret{}, fmt.Errorf("%w: the public half after %s is not the seed's", ErrInvalidSecret, privatePrefix)
		}
		return Secret{key: private, kind: kindPrivate}, nil
	}
	return Secret{}, fmt.Errorf("%w: %d bytes after %s, not %d or %d", ErrInvalidSecret, len(key), privatePrefix, ed25519.SeedSize, ed25519.PrivateKeySize)
}

// Text returns the key as ParseSecret reads it: "whsec_" and base64 of the secret,
// "whsk_" and base64 of the ed25519 seed, or "whpk_" and base64 of the public key. It is
// the form sealed at rest, and the form shown to a platform once (whsec_) or always (whpk_).
func (s Secret) Text() string {
	switch s.kind {
	case kindPrivate:
		return privatePrefix + base64.StdEncoding.EncodeToString(ed25519.PrivateKey(s.key).Seed())
	case kindPublic:
		return publicPrefix + base64.StdEncoding.EncodeToString(s.key)
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(s.key)
}

// Asymmetric says whether the key is an ed25519 key (whsk_ or whpk_), whose signatures are v1a.
func (s Secret) Asymmetric() bool { return s.kind != kindHMAC }

// PublicKey returns the public key of an ed25519 key, which verifies its signatures and
// nothing else, and false for a symmetric secret, which has none.
func (s Secret) PublicKey() (Secret, bool) {
	switch s.kind {
	case kindPrivate:
		return Secret{key: ed25519.PrivateKey(s.key).Public().(ed25519.PublicKey), kind: kindPublic}, true
	case kindPublic:
		return s, true
	}
	return Secret{}, false
}

// String returns the prefix and "…" ("whsec_…", "whsk_…"), never a secret or private key;
// a public key, which is no secret, is written whole.
func (s Secret) String() string {
	switch s.kind {
	case kindPrivate:
		return privatePrefix + "…"
	case kindPublic:
		return s.Text()
	}
	return secretPrefix + "…"
}

// Format prints String for every verb, so that %x or %v of a struct holding a Secret
// cannot print its bytes.
func (s Secret) Format(f fmt.State, _ rune) { fmt.Fprint(f, s.String()) }

// signature returns the base64 of HMAC-SHA256 under s of "id.timestamp.body".
func (s Secret) signature(id, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Sign returns the value of the webhook-signature header of a delivery: for each secret,
// "v1," and the base64 of HMAC-SHA256 of "id.timestamp.body" (timestamp in Unix seconds)
// under a whsec_ secret, or "v1a," and the base64 of the ed25519 signature of that text
// under a whsk_ key, separated by spaces. Two secrets are given while a rotated secret is
// still live, so that a receiver holding either verifies. It panics without a secret,
// with the zero Secret or with a public key: an unsigned delivery must never leave.
func Sign(id string, timestamp time.Time, body []byte, secrets ...Secret) string {
	if len(secrets) == 0 {
		panic("webhook: Sign without a secret")
	}
	ts := strconv.FormatInt(timestamp.Unix(), 10)
	var b strings.Builder
	for i, s := range secrets {
		if len(s.key) == 0 || s.kind == kindPublic {
			panic("webhook: Sign with the zero Secret or a public key")
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		if s.kind == kindPrivate {
			b.WriteString("v1a,")
			b.WriteString(base64.StdEncoding.EncodeToString(ed25519.Sign(ed25519.PrivateKey(s.key), signedContent(id, ts, body))))
			continue
		}
		b.WriteString("v1,")
		b.WriteString(s.signature(id, ts, body))
	}
	return b.String()
}

// Headers returns the three Standard Webhooks headers of a delivery: webhook-id,
// webhook-timestamp (Unix seconds) and webhook-signature (Sign's), keyed as http.Header
// keys them ("Webhook-Id"), so that http.Header(Headers(…)) is a request's headers.
func Headers(id string, timestamp time.Time, body []byte, secrets ...Secret) map[string][]string {
	key := textproto.CanonicalMIMEHeaderKey // as http.Header has them: "Webhook-Id"
	return map[string][]string{
		key(HeaderID):        {id},
		key(HeaderTimestamp): {strconv.FormatInt(timestamp.Unix(), 10)},
		key(HeaderSignature): {Sign(id, timestamp, body, secrets...)},
	}
}

// Verify checks a delivery as a receiver must: the three headers are present (keys
// matched in any case, so an http.Header and a map of lower-case keys both do, each given
// once), the timestamp is within tolerance of now either way (DefaultTolerance when
// tolerance is not positive), and one of the space-separated signatures is the body's:
// a v1 signature under a whsec_ secret, compared in constant time, or a v1a signature
// under a whpk_ key (or a whsk_ key's public half); signatures of other versions are ignored.
// Its errors wrap ErrMissingHeader, ErrInvalidHeader, ErrTimestampTooOld,
// ErrTimestampTooNew or ErrNoMatchingSignature.
func Verify(secret Secret, header map[string][]string, body []byte, tolerance time.Duration, now time.Time) error {
	id, err := headerValue(header, HeaderID)
	if err != nil {
		return err
	}
	ts, err := headerValue(header, HeaderTimestamp)
	if err != nil {
		return err
	}
	sigs, err := headerValue(header, HeaderSignature)
	if err != nil {
		return err
	}

	// Only the form Sign writes: the signed text is the header's text, so a second
	// spelling of one time ("+1614265330", "01614265330") would be a second message.
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || strconv.FormatInt(sec, 10) != ts {
		return fmt.Errorf("%w: %s is not Unix seconds", ErrInvalidHeader, HeaderTimestamp)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	// Compared without subtracting from sec, which may be any int64.
	nowSec, tol := now.Unix(), int64(tolerance/time.Second)
	switch {
	case sec < nowSec-tol:
		return fmt.Errorf("%w: %ds before now, more than %v", ErrTimestampTooOld, nowSec-sec, tolerance)
	case sec > nowSec+tol:
		return fmt.Errorf("%w: %ds after now, more than %v", ErrTimestampTooNew, sec-nowSec, tolerance)
	}

	if len(secret.key) == 0 {
		return ErrNoMatchingSignature
	}
	if public, ok := secret.PublicKey(); ok {
		return verifyAsymmetric(ed25519.PublicKey(public.key), signedContent(id, ts, body), sigs)
	}
	want := []byte(secret.signature(id, ts, body))
	for sig := range strings.SplitSeq(sigs, " ") {
		version, value, ok := strings.Cut(sig, ",")
		if ok && version == "v1" && hmac.Equal([]byte(value), want) {
			return nil
		}
	}
	return ErrNoMatchingSignature
}

// signedContent returns the text a signature signs: "id.timestamp.body".
func signedContent(id, timestamp string, body []byte) []byte {
	b := make([]byte, 0, len(id)+len(timestamp)+len(body)+2)
	b = append(append(append(append(append(b, id...), '.'), timestamp...), '.'), body...)
	return b
}

// verifyAsymmetric reports whether one of the v1a signatures among sigs is message's
// under public.
func verifyAsymmetric(public ed25519.PublicKey, message []byte, sigs string) error {
	for sig := range strings.SplitSeq(sigs, " ") {
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1a" {
			continue
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(value)
		if err == nil && len(raw) == ed25519.SignatureSize && ed25519.Verify(public, message, raw) {
			return nil
		}
	}
	return ErrNoMatchingSignature
}

// headerValue returns the one value of the header name, its key matched in any case.
func headerValue(header map[string][]string, name string) (string, error) {
	var value string
	found := 0
	for k, vs := range header {
		if !strings.EqualFold(k, name) {
			continue
		}
		for _, v := range vs {
			value = v
			found++
		}
	}
	switch {
	case found > 1:
		return "", fmt.Errorf("%w: %s given %d times", ErrInvalidHeader, name, found)
	case found == 0 || value == "":
		return "", fmt.Errorf("%w: %s", ErrMissingHeader, name)
	}
	return value, nil
}

// PublicText returns the whpk_ text of an ed25519 key's public key, as an endpoint stores
// and shows it, and nil for a symmetric secret.
func PublicText(s Secret) *string {
	public, ok := s.PublicKey()
	if !ok {
		return nil
	}
	text := public.Text()
	return &text
}

// SecretText returns the text of a key that is shown to its endpoint's platform once: a
// symmetric secret's whsec_ text, and "" for an ed25519 key, whose private half is never
// shown (its public key is).
func SecretText(s Secret) string {
	if s.Asymmetric() {
		return ""
	}
	return s.Text()
}

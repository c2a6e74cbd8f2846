// Package webhook holds what sending and receiving webhooks rest on, with no database:
// Standard Webhooks v1.0.0 signatures (secrets, Sign, Verify), the rules an endpoint's URL
// obeys, the retry schedule of a delivery, and a dialer that connects only to addresses
// allowed at the moment of connecting (the HTTP client over it is package egress).
package webhook

import (
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

// secretPrefix marks a symmetric Standard Webhooks secret.
const secretPrefix = "whsec_"

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
	// ErrInvalidSecret: the text is not a whsec_ secret.
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
	// ErrNoMatchingSignature: no v1 signature of the header is the body's under the secret.
	ErrNoMatchingSignature = errors.New("no matching webhook signature")
)

// Secret is an endpoint's signing key. Its printed forms (String, fmt verbs) never show
// it: Text is the one way to write it out. The zero Secret is no secret: Sign refuses it
// and Verify matches nothing under it.
type Secret struct {
	key []byte
}

// NewSecret returns a new random secret of SecretSize bytes.
func NewSecret() Secret {
	key := make([]byte, SecretSize)
	rand.Read(key) // never returns an error (crypto/rand, Go 1.24+)
	return Secret{key: key}
}

// ParseSecret reads a secret written as "whsec_" and the standard, padded base64 of 24 to
// 64 bytes, as Text writes it; surrounding white space is ignored. Any other text is
// refused with an error that wraps ErrInvalidSecret and does not show the text.
func ParseSecret(text string) (Secret, error) {
	text = strings.TrimSpace(text)
	encoded, ok := strings.CutPrefix(text, secretPrefix)
	if !ok {
		return Secret{}, fmt.Errorf("%w: it does not start with %s", ErrInvalidSecret, secretPrefix)
	}
	// The decoder skips line breaks; a secret has none.
	if strings.ContainsAny(encoded, "\r\n") {
		return Secret{}, fmt.Errorf("%w: not standard base64 after %s", ErrInvalidSecret, secretPrefix)
	}
	key, err := base64.StdEncoding.Strict().DecodeString(encoded)
	if err != nil { // the decoder's message would show where the text is bad: keep it out
		return Secret{}, fmt.Errorf("%w: not standard base64 after %s", ErrInvalidSecret, secretPrefix)
	}
	if len(key) < MinSecretSize || len(key) > MaxSecretSize {
		return Secret{}, fmt.Errorf("%w: %d bytes, not %d to %d", ErrInvalidSecret, len(key), MinSecretSize, MaxSecretSize)
	}
	return Secret{key: key}, nil
}

// Text returns the secret as ParseSecret reads it: "whsec_" and base64. It is the form
// shown to a platform once and sealed at rest.
func (s Secret) Text() string {
	return secretPrefix + base64.StdEncoding.EncodeToString(s.key)
}

// String returns "whsec_…": never the secret itself.
func (s Secret) String() string { return secretPrefix + "…" }

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

// Sign returns the value of the webhook-signature header of a delivery: "v1," and the
// base64 of HMAC-SHA256 of "id.timestamp.body" (timestamp in Unix seconds) under each
// secret, separated by spaces. Two secrets are given while a rotated secret is still live,
// so that a receiver holding either verifies. It panics without a secret or with the zero
// Secret: an unsigned delivery must never leave.
func Sign(id string, timestamp time.Time, body []byte, secrets ...Secret) string {
	if len(secrets) == 0 {
		panic("webhook: Sign without a secret")
	}
	ts := strconv.FormatInt(timestamp.Unix(), 10)
	var b strings.Builder
	for i, s := range secrets {
		if len(s.key) == 0 {
			panic("webhook: Sign with the zero Secret")
		}
		if i > 0 {
			b.WriteByte(' ')
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
// tolerance is not positive), and one of the space-separated v1 signatures is the body's
// under secret, compared in constant time; signatures of other versions are ignored.
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
	want := []byte(secret.signature(id, ts, body))
	for sig := range strings.SplitSeq(sigs, " ") {
		version, value, ok := strings.Cut(sig, ",")
		if ok && version == "v1" && hmac.Equal([]byte(value), want) {
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

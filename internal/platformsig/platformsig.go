// Package platformsig computes the signatures of platform requests as authentication
// checks them, at a cost that depends on the request alone and without allocating:
// HMAC-SHA256 states kept keyed per secret, the X-Signature's hex decoded in place, and
// X-Timestamp read strictly. Package signing is what platforms sign with.
package platformsig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"strings"
	"sync"
)

// MACs reuses HMAC-SHA256 states keyed with one secret: Reset returns a state to its
// keyed start, so a request neither keys nor allocates a new one.
type MACs struct {
	secret []byte
	pool   sync.Pool // of *keyedMAC
}

// keyedMAC is an HMAC state with buffers for the message it is given and its sum.
type keyedMAC struct {
	hash.Hash
	msg []byte
	sum [sha256.Size]byte
}

// NewMACs returns the HMAC-SHA256 states of secret.
func NewMACs(secret []byte) *MACs {
	m := &MACs{secret: secret}
	m.pool.New = func() any { return &keyedMAC{Hash: hmac.New(sha256.New, m.secret)} }
	return m
}

func (m *MACs) get() *keyedMAC { return m.pool.Get().(*keyedMAC) }

func (m *MACs) put(k *keyedMAC) {
	k.Reset()
	if cap(k.msg) <= 4<<10 { // a long request target's buffer is not kept
		m.pool.Put(k)
	}
}

// writeStringToSign writes signing.StringToSign(method, target, body) without building it.
func (k *keyedMAC) writeStringToSign(method, target string, body []byte) {
	k.msg = append(append(k.msg[:0], method...), target...)
	if len(body) == 0 { // a GET's, and most reads': the hash is known
		k.msg = append(k.msg, emptyBodyHash...)
	} else {
		sum := sha256.Sum256(body)
		k.msg = hex.AppendEncode(k.msg, sum[:])
	}
	k.Write(k.msg) // #nosec G104 -- a hash.Hash never returns an error from Write
}

// emptyBodyHash is the hex SHA-256 of an empty body, as the string to sign ends for one.
var emptyBodyHash = func() string {
	sum := sha256.Sum256(nil)
	return hex.EncodeToString(sum[:])
}()

// Sums returns the HMACs under m's key of a request's string to sign in the
// specification's form and, when the request carries X-Timestamp (timestamp is not "":
// hasStamped), in the timestamped form. Both are computed whatever the platform requires: what
// authentication costs depends on the request alone, never on the platform's record.
func (macs *MACs) Sums(method, target string, body []byte, timestamp string) (plain, stamped [sha256.Size]byte, hasStamped bool) {
	mac := macs.get()
	defer macs.put(mac)
	mac.writeStringToSign(method, target, body)
	if timestamp != "" {
		// The timestamped form extends the plain one: go on from a copy of its state.
		var ext hash.Hash
		if c, ok := mac.Hash.(hash.Cloner); ok {
			if clone, err := c.Clone(); err == nil {
				ext = clone
			}
		}
		if ext == nil {
			ext = hmac.New(sha256.New, macs.secret)
			ext.Write(mac.msg)
		}
		ext.Write([]byte(timestamp))
		copy(stamped[:], ext.Sum(mac.sum[:0]))
		hasStamped = true
	}
	copy(plain[:], mac.Sum(mac.sum[:0]))
	return plain, stamped, hasStamped
}

// DecodeSignature decodes an X-Signature's hex digits, in either case, into buf when there
// are as many as an HMAC-SHA256 has, as in any signature that can be right, without
// allocating; a signature of another length is decoded apart, so that malformed hex is
// told from a wrong signature whatever its length.
func DecodeSignature(buf *[sha256.Size]byte, s string) ([]byte, error) {
	if len(s) != 2*sha256.Size {
		return hex.DecodeString(s)
	}
	var digits [2 * sha256.Size]byte
	copy(digits[:], s)
	if _, err := hex.Decode(buf[:], digits[:]); err != nil {
		return nil, err
	}
	return buf[:], nil
}

// ParseTimestamp reads Unix seconds written in decimal: an optional minus sign and
// digits, nothing else (no "+", spaces or fraction), within int64.
func ParseTimestamp(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	ts, err := strconv.ParseInt(s, 10, 64)
	return ts, err == nil
}

// Package signing is how a platform request is signed: the message its X-Signature covers
// and the signature, in the specification's form and in the timestamped form of platforms
// that require it. The server verifies with these functions and package payments
// re-exports them (payments.Sign is Sign); they live here, with the standard library
// alone, so that a client (package client) signs as the server verifies without linking
// the service and its database drivers.
package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Authentication headers.
const (
	HeaderPlatformID = "X-Platform-ID"
	HeaderSignature  = "X-Signature"
	HeaderTimestamp  = "X-Timestamp" // platforms that require signed timestamps
	HeaderAPIKey     = "X-Api-Key"   // #nosec G101 -- a header's name, not a credential
	HeaderAPISecret  = "X-Api-Secret"
)

// StringToSign is the message a platform request's signature covers: the method, the
// request target exactly as sent (path and query), and the hex SHA-256 of the body.
func StringToSign(method, target string, body []byte) string {
	sum := sha256.Sum256(body)
	return method + target + hex.EncodeToString(sum[:])
}

// Sign returns the X-Signature of a platform request: hex HMAC-SHA256 of StringToSign
// under the platform's secret. Clients and the server use this same function.
func Sign(secret, method, target string, body []byte) string {
	return hexHMAC(secret, StringToSign(method, target, body))
}

// StringToSignTimestamped is the message a request of a platform that requires signed
// timestamps covers: StringToSign followed by timestamp, the X-Timestamp value exactly
// as sent (Unix seconds in decimal, as Timestamp writes them).
func StringToSignTimestamped(method, target string, body []byte, timestamp string) string {
	return StringToSign(method, target, body) + timestamp
}

// SignTimestamped returns the X-Signature of a request of a platform that requires
// signed timestamps: hex HMAC-SHA256 of StringToSignTimestamped under the platform's
// secret. The request sends timestamp as X-Timestamp.
func SignTimestamped(secret, method, target string, body []byte, timestamp string) string {
	return hexHMAC(secret, StringToSignTimestamped(method, target, body, timestamp))
}

// Timestamp returns the X-Timestamp value for t: its Unix seconds in decimal.
func Timestamp(t time.Time) string {
	return strconv.FormatInt(t.Unix(), 10)
}

// hexHMAC is the hex HMAC-SHA256 of msg under secret: a signature as X-Signature carries it.
func hexHMAC(secret, msg string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(msg)) // #nosec G104 -- a hash.Hash never returns an error from Write
	return hex.EncodeToString(mac.Sum(nil))
}

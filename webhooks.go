package payments

import (
	"time"

	"github.com/platform-payments/payments/internal/webhook"
)

// Webhooks, for receivers. Deliveries are signed by the Standard Webhooks scheme (v1.0.0):
// headers webhook-id, webhook-timestamp and webhook-signature, the last holding "v1," and
// the base64 HMAC-SHA256 of "id.timestamp.body" under the endpoint's secret, one per live
// secret while a rotated one is honoured. Package internal/webhook signs and verifies.

// DefaultWebhookTolerance is how far a delivery's timestamp may be from the receiver's
// clock, either way, when VerifyWebhook is given no tolerance.
const DefaultWebhookTolerance = webhook.DefaultTolerance

// Errors of VerifyWebhook, for errors.Is. They are not *Error values: they are the
// receiver's outcomes, not the service's, and a receiver tells them apart (a stale
// delivery from a forged one, a misconfigured secret from both).
var (
	// ErrWebhookSecret: the secret is not "whsec_" and base64 of 24 to 64 bytes.
	ErrWebhookSecret = webhook.ErrInvalidSecret
	// ErrWebhookMissingHeader: webhook-id, webhook-timestamp or webhook-signature is absent.
	ErrWebhookMissingHeader = webhook.ErrMissingHeader
	// ErrWebhookInvalidHeader: a webhook header is given twice, or the timestamp is not
	// Unix seconds.
	ErrWebhookInvalidHeader = webhook.ErrInvalidHeader
	// ErrWebhookTooOld: the timestamp is further in the past than the tolerance (a replay,
	// or a delivery held up).
	ErrWebhookTooOld = webhook.ErrTimestampTooOld
	// ErrWebhookTooNew: the timestamp is further in the future than the tolerance.
	ErrWebhookTooNew = webhook.ErrTimestampTooNew
	// ErrWebhookSignature: no v1 signature of the delivery is its body's under the secret.
	ErrWebhookSignature = webhook.ErrNoMatchingSignature
)

// VerifyWebhook checks a webhook delivery against the endpoint's secret (the whsec_ text
// shown when the endpoint was created or its secret rotated): its three headers are
// present (in any case; an http.Header passes as it is), its timestamp is within
// tolerance of now either way (DefaultWebhookTolerance when tolerance is not positive),
// and one of its signatures is the body's. Verify the body as received, before decoding
// it, and use webhook-id to process each event once:
//
//	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
//	if err := payments.VerifyWebhook(secret, r.Header, body, 5*time.Minute); err != nil {
//		http.Error(w, "invalid signature", http.StatusUnauthorized)
//		return
//	}
//
// Its errors wrap ErrWebhookSecret, ErrWebhookMissingHeader, ErrWebhookInvalidHeader,
// ErrWebhookTooOld, ErrWebhookTooNew or ErrWebhookSignature; none shows the secret.
func VerifyWebhook(secret string, header map[string][]string, body []byte, tolerance time.Duration) error {
	s, err := webhook.ParseSecret(secret)
	if err != nil {
		return err
	}
	return webhook.Verify(s, header, body, tolerance, time.Now())
}

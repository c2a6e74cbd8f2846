package payments_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/webhook"
)

func TestVerifyWebhook(t *testing.T) {
	secret := webhook.NewSecret()
	body := []byte(`{"type":"payee.created"}`)
	now := time.Now()
	t.Run("OK/lower-case map", func(t *testing.T) {
		header := map[string][]string{
			"webhook-id":        {"evt_1"},
			"webhook-timestamp": {strconv.FormatInt(now.Unix(), 10)},
			"webhook-signature": {webhook.Sign("evt_1", now, body, secret)},
		}
		if err := payments.VerifyWebhook(secret.Text(), header, body, 0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrWebhookSecret", func(t *testing.T) {
		header := webhook.Headers("evt_1", now, body, secret)
		bare := strings.TrimPrefix(secret.Text(), "whsec_")
		err := payments.VerifyWebhook(bare, header, body, time.Minute)
		if !errors.Is(err, payments.ErrWebhookSecret) || strings.Contains(err.Error(), bare[:8]) {
			t.Fatalf("VerifyWebhook with the base64 alone = %v", err)
		}
	})
	t.Run("ErrWebhookMissingHeader", func(t *testing.T) {
		err := payments.VerifyWebhook(secret.Text(), map[string][]string{}, body, time.Minute)
		if !errors.Is(err, payments.ErrWebhookMissingHeader) {
			t.Fatalf("VerifyWebhook without headers = %v", err)
		}
	})
	t.Run("ErrWebhookTooNew", func(t *testing.T) {
		header := webhook.Headers("evt_1", now.Add(time.Hour), body, secret)
		if err := payments.VerifyWebhook(secret.Text(), header, body, time.Minute); !errors.Is(err, payments.ErrWebhookTooNew) {
			t.Fatalf("VerifyWebhook an hour ahead = %v", err)
		}
	})
}

package webhook_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/platform-payments/payments/internal/webhook"
)

// The Standard Webhooks Go library (a test-only dependency) and this package agree, both
// ways: each verifies what the other signs, with one secret and with two (a rotation).

func theirs(t *testing.T, s webhook.Secret) *standardwebhooks.Webhook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(s.Text())
	if err != nil {
		t.Fatal(err)
	}
	return wh
}

func TestStandardLibrarySignsTheSpecExample(t *testing.T) {
	wh := theirs(t, mustParse(t, specSecret))
	got, err := wh.Sign(specID, specTime, []byte(specBody))
	if err != nil || got != specSignature {
		t.Fatalf("their Sign = %q, %v; want %q", got, err, specSignature)
	}
}

func TestOursVerifiedByTheirs(t *testing.T) {
	now := time.Now()
	old, current := webhook.NewSecret(), webhook.NewSecret()
	body := []byte(`{"id":"0190a1b2-0000-7000-8000-000000000001","type":"user.created"}`)
	h := webhook.Headers("0190a1b2-0000-7000-8000-000000000001", now, body, current, old)
	for name, s := range map[string]webhook.Secret{"old": old, "current": current} {
		if err := theirs(t, s).Verify(body, h); err != nil {
			t.Errorf("their Verify under the %s secret: %v", name, err)
		}
	}
	if err := theirs(t, webhook.NewSecret()).Verify(body, h); err == nil {
		t.Error("their Verify under a third secret passed")
	}
	if err := theirs(t, current).Verify(append(body, ' '), h); err == nil {
		t.Error("their Verify of another body passed")
	}
}

func TestTheirsVerifiedByOurs(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	old, current := webhook.NewSecret(), webhook.NewSecret()
	body := []byte(`{"type":"card.added"}`)
	id := "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
	sigOld, err := theirs(t, old).Sign(id, now, body)
	if err != nil {
		t.Fatal(err)
	}
	sigCurrent, err := theirs(t, current).Sign(id, now, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set(standardwebhooks.HeaderWebhookID, id)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, sigCurrent+" "+sigOld)
	for name, s := range map[string]webhook.Secret{"old": old, "current": current} {
		if err := webhook.Verify(s, h, body, time.Minute, now); err != nil {
			t.Errorf("our Verify under the %s secret: %v", name, err)
		}
	}
	if err := webhook.Verify(webhook.NewSecret(), h, body, time.Minute, now); err == nil {
		t.Error("our Verify under a third secret passed")
	}
	// Their signature is ours, byte for byte.
	if want := webhook.Sign(id, now, body, current, old); sigCurrent+" "+sigOld != want {
		t.Errorf("their signatures %q, ours %q", sigCurrent+" "+sigOld, want)
	}
}

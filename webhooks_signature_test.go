package payments_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/webhook"
)

// VerifyWebhook takes an ed25519 endpoint's whpk_ public key as it takes a whsec_
// secret: v1a signatures verify under it, v1 signatures never do.
func TestVerifyWebhookPublicKey(t *testing.T) {
	key := webhook.NewKey(true)
	public, _ := key.PublicKey()
	body := []byte(`{"type":"payee.created"}`)
	now := time.Now()
	cases := []struct {
		name   string
		verify string
		header map[string][]string
		want   error
	}{
		{"v1a under whpk_", public.Text(), webhook.Headers("evt_1", now, body, key), nil},
		{"v1a and v1 under whpk_", public.Text(), webhook.Headers("evt_1", now, body, webhook.NewSecret(), key), nil},
		{"v1 alone under whpk_", public.Text(), webhook.Headers("evt_1", now, body, webhook.NewSecret()), payments.ErrWebhookSignature},
		{"v1a under another whpk_", func() string { p, _ := webhook.NewKey(true).PublicKey(); return p.Text() }(), webhook.Headers("evt_1", now, body, key), payments.ErrWebhookSignature},
		{"v1a under a whsec_", webhook.NewSecret().Text(), webhook.Headers("evt_1", now, body, key), payments.ErrWebhookSignature},
		{"stale v1a", public.Text(), webhook.Headers("evt_1", now.Add(-time.Hour), body, key), payments.ErrWebhookTooOld},
		{"whpk_ of 31 bytes", "whpk_" + strings.Repeat("A", 40) + "AA=", webhook.Headers("evt_1", now, body, key), payments.ErrWebhookSecret},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := payments.VerifyWebhook(c.verify, c.header, body, time.Minute)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("VerifyWebhook = %v, want %v", err, c.want)
			}
		})
	}
}

// An ed25519 endpoint, end to end in the library on the test's engine: its key is sealed
// at rest, its public key shown, its deliveries signed v1a; a switch of kinds overlaps, as
// a rotation does; rotation keeps the kind.
func TestEndpointSignatureKinds(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t, payments.Options{WebhookAllow: loopback})
	p := mustPlatform(t, svc)
	ed, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{
		URL: "http://127.0.0.1:9/hook", Events: []string{payments.EventUserCreated}, Signature: "ed25519",
	})
	if err != nil {
		t.Fatal(err)
	}
	if ed.Secret != "" || ed.Signature != "ed25519" || !strings.HasPrefix(ed.PublicKey, "whpk_") {
		t.Fatalf("created %+v: want no secret, signature ed25519 and a whpk_ public key", ed)
	}
	v1, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "http://127.0.0.1:9/v1", Events: []string{payments.EventUserCreated}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v1.Secret, "whsec_") || v1.Signature != "" || v1.PublicKey != "" {
		t.Fatalf("created by default %+v", v1)
	}
	list, err := svc.ListWebhookEndpoints(ctx, p.PlatformID)
	if err != nil || len(list) != 2 || list[0].PublicKey != ed.PublicKey || list[0].Signature != "ed25519" || list[1].PublicKey != "" {
		t.Fatalf("list = %+v, %v", list, err)
	}

	// One event, a delivery to each endpoint: v1a to one, v1 to the other.
	mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	claimed, err := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d deliveries, %v", len(claimed), err)
	}
	now := time.Now()
	for _, d := range claimed {
		h := d.Headers(now)
		sig := h["Webhook-Signature"][0]
		switch d.EndpointID {
		case ed.ID.String():
			if !strings.HasPrefix(sig, "v1a,") || strings.Contains(sig, " ") {
				t.Errorf("the ed25519 endpoint's signature %q", sig)
			}
			if err := payments.VerifyWebhook(ed.PublicKey, h, d.Payload, time.Minute); err != nil {
				t.Errorf("VerifyWebhook under the public key: %v", err)
			}
		case v1.ID.String():
			if !strings.HasPrefix(sig, "v1,") {
				t.Errorf("the v1 endpoint's signature %q", sig)
			}
			if err := payments.VerifyWebhook(ed.PublicKey, h, d.Payload, time.Minute); !errors.Is(err, payments.ErrWebhookSignature) {
				t.Errorf("a v1 delivery under the ed25519 public key: %v", err)
			}
		}
	}

	// Rotation keeps the kind: a new public key, both keys sign.
	rotated, err := svc.RotateWebhookSecret(ctx, p.PlatformID, ed.ID.String())
	if err != nil || rotated.Secret != "" || rotated.PublicKey == ed.PublicKey || !strings.HasPrefix(rotated.PublicKey, "whpk_") {
		t.Fatalf("rotated %+v, %v", rotated, err)
	}
	// A switch to v1: a whsec_ secret shown, the public key gone; the ed25519 key signs
	// beside it for the overlap.
	switched, err := svc.SwitchEndpointSignature(ctx, p.PlatformID, ed.ID.String(), false)
	if err != nil || !strings.HasPrefix(switched.Secret, "whsec_") || switched.PublicKey != "" || switched.Signature != "" {
		t.Fatalf("switched to v1: %+v, %v", switched, err)
	}
	// And back: v1 endpoint to ed25519.
	back, err := svc.SwitchEndpointSignature(ctx, p.PlatformID, v1.ID.String(), true)
	if err != nil || back.Secret != "" || !strings.HasPrefix(back.PublicKey, "whpk_") || back.Signature != "ed25519" {
		t.Fatalf("switched to ed25519: %+v, %v", back, err)
	}
	if _, err := svc.SwitchEndpointSignature(ctx, mustPlatform(t, svc).PlatformID, v1.ID.String(), false); func() bool { var e *payments.Error; return !errors.As(err, &e) || e.Code != payments.CodeNotFound }() {
		t.Fatalf("switch by another platform: %v", err)
	}

	mustUser(t, svc, p.PlatformID, "Bob", "bob@example.com")
	claimed, err = svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d deliveries, %v", len(claimed), err)
	}
	for _, d := range claimed {
		h := d.Headers(now)
		sig := h["Webhook-Signature"][0]
		switch d.EndpointID {
		case ed.ID.String(): // now v1, the ed25519 key beside it
			if !strings.HasPrefix(sig, "v1,") || !strings.Contains(sig, " v1a,") {
				t.Errorf("after the switch to v1: %q", sig)
			}
			for _, k := range []string{switched.Secret, rotated.PublicKey} {
				if err := payments.VerifyWebhook(k, h, d.Payload, time.Minute); err != nil {
					t.Errorf("VerifyWebhook under %.8s…: %v", k, err)
				}
			}
		case v1.ID.String(): // now ed25519, the v1 secret beside it
			if !strings.HasPrefix(sig, "v1a,") || !strings.Contains(sig, " v1,") {
				t.Errorf("after the switch to ed25519: %q", sig)
			}
			for _, k := range []string{v1.Secret, back.PublicKey} {
				if err := payments.VerifyWebhook(k, h, d.Payload, time.Minute); err != nil {
					t.Errorf("VerifyWebhook under %.8s…: %v", k, err)
				}
			}
		}
	}
}

package payments

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/hooks"
	"github.com/platform-payments/payments/internal/outbox"
	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/queries"
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
	// ErrWebhookSecret: the secret is not "whsec_" and base64 of 24 to 64 bytes, nor a whpk_ key.
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
// shown when it was created or rotated; for "signature": "ed25519", its whpk_ public_key,
// checking v1a signatures), in the same way: its three headers are
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

// Webhook endpoints: the URLs a platform receives its events at.

// AllEvents, as the only entry of an endpoint's events, subscribes it to every type,
// those added later included. An endpoint created without events has it.
const AllEvents = "*"

// DisableAfter is how long an endpoint may fail every attempt before it is disabled.
const DisableAfter = outbox.DisableAfter

// secretOverlap is how long a rotated secret keeps signing deliveries beside the new one.
const secretOverlap = 24 * time.Hour

// EndpointStatus says whether an endpoint receives deliveries.
type EndpointStatus string

// Endpoint statuses. A disabled endpoint receives nothing until it is enabled again: it
// answered 410 Gone, or failed every attempt for DisableAfter.
const (
	EndpointEnabled  EndpointStatus = "enabled"
	EndpointDisabled EndpointStatus = "disabled"
)

// WebhookEndpoint is an endpoint as the API shows it. Secret is shown when the endpoint is
// created and when its secret is rotated, never again; an ed25519 endpoint has PublicKey.
type WebhookEndpoint struct {
	ID             uuid.UUID      `json:"id"`
	URL            string         `json:"url"`
	Description    *string        `json:"description"`
	Events         []string       `json:"events"`
	Status         EndpointStatus `json:"status"`
	DisabledReason *string        `json:"disabled_reason"`
	CreatedAt      time.Time      `json:"created_at"`
	// Its health, in the answers of List, Get, Update and Disable Webhook Endpoint.
	*EndpointHealth
	Secret    string `json:"secret,omitempty"`
	Signature string `json:"signature,omitempty"`  // "ed25519", or left out: v1
	PublicKey string `json:"public_key,omitempty"` // whpk_, of an ed25519 endpoint
}

// NewWebhookEndpoint is the body of Create Webhook Endpoint. Events left out means every
// type (AllEvents).
type NewWebhookEndpoint struct {
	URL         string   `json:"url"`
	Events      []string `json:"events,omitempty"`
	Description *string  `json:"description,omitempty"`
	Signature   string   `json:"signature,omitempty"` // "v1" (HMAC, the default) or "ed25519" (v1a)
}

func (NewWebhookEndpoint) requestSchema() string { return "webhooks_create" }

// DeletedEndpoint is the answer of Delete Webhook Endpoint.
type DeletedEndpoint struct {
	ID      uuid.UUID `json:"id"`
	Deleted bool      `json:"deleted"`
}

// CreateWebhookEndpoint registers a URL of the platform to receive its events, signed
// with a new secret, which the answer shows once.
//
// Returns CodeInvalid when the body fails validation, the URL included (see
// Options.WebhookAllow), and CodeNotFound for an unknown platform.
//
// Options: WithKey, with which it creates the endpoint at most once, and Validated.
func (s *Service) CreateWebhookEndpoint(ctx context.Context, platformID uuid.UUID, in NewWebhookEndpoint, opts ...Call) (WebhookEndpoint, error) {
	c := options(opts)
	return once(ctx, s, c.key, platformScope(platformID), "CreateWebhookEndpoint", in, func(a *attempt) (WebhookEndpoint, error) {
		return s.createWebhookEndpoint(ctx, a, c.validated, platformID, in)
	})
}

func (s *Service) createWebhookEndpoint(ctx context.Context, a *attempt, v *Validation, platformID uuid.UUID, in NewWebhookEndpoint) (WebhookEndpoint, error) {
	if _, err := s.validateValue(v, in.requestSchema(), nil, nil, in); err != nil {
		return WebhookEndpoint{}, err
	}
	secret := webhook.NewKey(in.Signature == "ed25519")
	id := s.newID().String()
	all := len(in.Events) == 0 || slices.Contains(in.Events, AllEvents)
	var e WebhookEndpoint
	err := s.writeRemembering(ctx, store.WriteOptions{}, a, func() any { return e }, func(ctx context.Context, q store.Querier) error {
		p, err := q.GetPlatform(ctx, platformID.String())
		if err != nil {
			return notFound(err, "Platform not found.")
		}
		if err := s.checkWebhookURL(&in.URL, Environment(p.Environment)); err != nil {
			return err
		}
		row, err := q.CreateWebhookEndpoint(ctx, queries.CreateWebhookEndpointParams{
			ID: id, PlatformID: platformID.String(), Url: in.URL, Description: in.Description,
			AllEvents: boolInt(all), SecretSealed: s.keys.Seal([]byte(secret.Text()), seal.WebhookSecretAAD(id)),
			PublicKey: webhook.PublicText(secret), CreatedAt: formatTime(s.Now()),
		})
		if err != nil {
			return err
		}
		var subs []queries.WebhookSubscription // in the order given
		for _, t := range in.Events {
			if all {
				break
			}
			if err := q.AddWebhookSubscription(ctx, queries.AddWebhookSubscriptionParams{EndpointID: id, Type: t}); err != nil {
				return err
			}
			subs = append(subs, queries.WebhookSubscription{EndpointID: id, Type: t})
		}
		if e, err = endpointFromRow(row, subs); err != nil {
			return err
		}
		e.Secret = webhook.SecretText(secret)
		return nil
	})
	return e, err
}

// ListWebhookEndpoints returns the platform's endpoints, oldest first, with their health
// and without secrets.
//
// Returns CodeNotFound for an unknown platform.
func (s *Service) ListWebhookEndpoints(ctx context.Context, platformID uuid.UUID) ([]WebhookEndpoint, error) {
	var out []WebhookEndpoint
	err := s.read(ctx, func(q store.Querier) (err error) {
		if _, err := q.GetPlatform(ctx, platformID.String()); err != nil {
			return notFound(err, "Platform not found.")
		}
		out, err = s.platformEndpoints(ctx, q, platformID)
		for i := range out {
			if err == nil {
				out[i].EndpointHealth, err = hooks.Health(ctx, q, out[i].ID.String())
			}
		}
		return err
	})
	return out, err
}

// platformEndpoints reads the platform's endpoints and their subscriptions.
func (s *Service) platformEndpoints(ctx context.Context, q store.Querier, platformID uuid.UUID) ([]WebhookEndpoint, error) {
	rows, err := q.ListWebhookEndpoints(ctx, platformID.String())
	if err != nil {
		return nil, err
	}
	subs, err := q.ListWebhookSubscriptions(ctx, platformID.String())
	if err != nil {
		return nil, err
	}
	out := make([]WebhookEndpoint, 0, len(rows))
	for _, r := range rows {
		e, err := endpointFromRow(r, subs)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// DeleteWebhookEndpoint deletes an endpoint of the platform: it receives nothing more.
// Its deliveries and their attempts stay in the events' history.
//
// Returns CodeInvalid for a malformed id and CodeNotFound when the platform has no such
// endpoint.
//
// Options: WithKey, with which a retry answers as the first call did.
func (s *Service) DeleteWebhookEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string, opts ...Call) (DeletedEndpoint, error) {
	return once(ctx, s, options(opts).key, platformScope(platformID), "DeleteWebhookEndpoint", endpointID, func(a *attempt) (DeletedEndpoint, error) {
		if err := s.validateEndpointID(endpointID); err != nil {
			return DeletedEndpoint{}, err
		}
		out := DeletedEndpoint{ID: uuid.MustParse(endpointID), Deleted: true}
		err := s.writeRemembering(ctx, store.WriteOptions{}, a, func() any { return out }, func(ctx context.Context, q store.Querier) error {
			n, err := q.DeleteWebhookEndpoint(ctx, queries.DeleteWebhookEndpointParams{
				DeletedAt: new(formatTime(s.Now())), ID: out.ID.String(), PlatformID: platformID.String(),
			})
			if err == nil && n == 0 {
				return Errorf(CodeNotFound, "Webhook endpoint not found.")
			}
			return err
		})
		return out, err
	})
}

// EnableWebhookEndpoint enables an endpoint of the platform again (enabling an enabled one
// changes nothing), forgetting its failures. Events that were not delivered while it was
// disabled can be sent with ResendEvent.
//
// Returns CodeInvalid for a malformed id and CodeNotFound when the platform has no such
// endpoint.
func (s *Service) EnableWebhookEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string) (WebhookEndpoint, error) {
	return s.changeEndpoint(ctx, platformID, endpointID, false, func(ctx context.Context, q store.Querier, id string) (queries.WebhookEndpoint, string, error) {
		row, err := q.EnableWebhookEndpoint(ctx, queries.EnableWebhookEndpointParams{ID: id, PlatformID: platformID.String()})
		return row, "", err
	})
}

// RotateWebhookSecret gives an endpoint of the platform a new secret (or ed25519 key, whose
// public_key the answer shows), shown once. For 24 hours deliveries are signed with both,
// so that receivers can move to the new one without missing a delivery.
//
// Returns CodeInvalid for a malformed id and CodeNotFound when the platform has no such
// endpoint.
func (s *Service) RotateWebhookSecret(ctx context.Context, platformID uuid.UUID, endpointID string) (WebhookEndpoint, error) {
	return s.changeEndpoint(ctx, platformID, endpointID, false, func(ctx context.Context, q store.Querier, id string) (queries.WebhookEndpoint, string, error) {
		e, err := q.GetDeliveryEndpoint(ctx, id)
		if err != nil {
			return e, "", err
		}
		return s.rekeyEndpoint(ctx, q, platformID, id, e.PublicKey != nil)
	})
}

// rekeyEndpoint gives an endpoint a new key, ed25519 when asymmetric, else a v1 secret
// (switching kinds when it had the other), the old key signing beside it for
// secretOverlap; it returns the row and the secret to show (none for ed25519).
func (s *Service) rekeyEndpoint(ctx context.Context, q store.Querier, platformID uuid.UUID, id string, asymmetric bool) (queries.WebhookEndpoint, string, error) {
	key := webhook.NewKey(asymmetric)
	row, err := q.RotateWebhookSecret(ctx, queries.RotateWebhookSecretParams{
		PreviousUntil: new(formatTime(s.Now().Add(secretOverlap))),
		SecretSealed:  s.keys.Seal([]byte(key.Text()), seal.WebhookSecretAAD(id)),
		PublicKey:     webhook.PublicText(key), ID: id, PlatformID: platformID.String(),
	})
	return row, webhook.SecretText(key), err
}

// changeEndpoint runs change on an endpoint of the platform and returns the endpoint as
// it leaves it, with the secret change returns (and its health, when health is set).
func (s *Service) changeEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string, health bool,
	change func(ctx context.Context, q store.Querier, id string) (queries.WebhookEndpoint, string, error)) (WebhookEndpoint, error) {
	if err := s.validateEndpointID(endpointID); err != nil {
		return WebhookEndpoint{}, err
	}
	var e WebhookEndpoint
	err := s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		id := canonicalID(endpointID)
		row, secret, err := change(ctx, q, id)
		if err != nil {
			return notFound(err, "Webhook endpoint not found.")
		}
		subs, err := q.ListWebhookSubscriptions(ctx, platformID.String())
		if err != nil {
			return err
		}
		if e, err = endpointFromRow(row, subs); err == nil && health {
			e.EndpointHealth, err = hooks.Health(ctx, q, id)
		}
		e.Secret = secret
		return err
	})
	return e, err
}

func (s *Service) validateEndpointID(id string) error {
	_, err := s.validate("webhooks_endpoint", map[string]string{"endpoint_id": id}, nil, nil)
	return err
}

// endpointFromRow is the API's view of a stored endpoint, with its types among subs (the
// subscriptions of its platform's endpoints), or AllEvents.
func endpointFromRow(r queries.WebhookEndpoint, subs []queries.WebhookSubscription) (WebhookEndpoint, error) {
	created, err := parseTime(r.CreatedAt)
	events := []string{AllEvents}
	if r.AllEvents == 0 {
		events = []string{}
		for _, sub := range subs {
			if sub.EndpointID == r.ID {
				events = append(events, sub.Type)
			}
		}
	}
	e := WebhookEndpoint{
		ID: uuid.MustParse(r.ID), URL: r.Url, Description: r.Description, Events: events,
		Status: EndpointStatus(r.Status), DisabledReason: r.DisabledReason, CreatedAt: created,
	}
	if r.PublicKey != nil {
		e.Signature, e.PublicKey = "ed25519", *r.PublicKey
	}
	return e, err
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

package payments

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/hooks"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/queries"
)

// Event types of webhooks themselves: a test event (SendTestWebhook), and an endpoint
// disabled for its failures, told to the platform's other endpoints.
const (
	EventWebhookTest             = "webhook.test"
	EventWebhookEndpointDisabled = "webhook_endpoint.disabled"
)

// MaxRecoveryAge is how far back RecoverWebhookEndpoint may start.
const MaxRecoveryAge = hooks.MaxRecoveryAge

// The answers of the endpoint operations below (package internal/hooks has their fields).
type (
	EndpointHealth     = hooks.EndpointHealth     // an endpoint's health
	WebhookAttempt     = hooks.WebhookAttempt     // an attempt to deliver an event to an endpoint
	WebhookAttemptPage = hooks.WebhookAttemptPage // a page of an endpoint's attempts
	Recovered          = hooks.Recovered          // how many deliveries a recovery queued
)

// WebhookEndpointUpdate is the body of Update Webhook Endpoint: each member sent replaces
// the endpoint's (under Create's rules), one left out stays, and so do url and events
// sent as null; a description sent as null is removed. The secret stays.
type WebhookEndpointUpdate struct {
	URL         *string      `json:"url,omitempty"`
	Events      []string     `json:"events,omitempty"`
	Description OptionalText `json:"description,omitzero"`
	// Signature switches the endpoint to "ed25519" (v1a) or "v1" signatures; its old key
	// signs beside the new one for a day, as after a rotation.
	Signature *string `json:"signature,omitempty"`
}

func (WebhookEndpointUpdate) requestSchema() string { return "webhooks_update" }

// OptionalText is a text member of an update whose null means none: Set says whether it
// was sent, Value is the text (nil for null).
type OptionalText struct {
	Set   bool
	Value *string
}

// UnmarshalJSON sets the member as sent.
func (o *OptionalText) UnmarshalJSON(b []byte) error {
	o.Set = true
	return json.Unmarshal(b, &o.Value)
}

// MarshalJSON writes the text, or null.
func (o OptionalText) MarshalJSON() ([]byte, error) { return json.Marshal(o.Value) }

// IsZero reports whether the member was left out.
func (o OptionalText) IsZero() bool { return !o.Set }

// WebhookRecovery is the body of Recover Webhook Endpoint: the events created since
// (at most MaxRecoveryAge ago) until (left out: now).
type WebhookRecovery struct {
	Since time.Time  `json:"since"`
	Until *time.Time `json:"until,omitempty"`
}

func (WebhookRecovery) requestSchema() string { return "webhooks_recover" }

// GetWebhookEndpoint returns an endpoint of the platform, with its health.
//
// Returns CodeInvalid for a malformed id and CodeNotFound when the platform has no such
// endpoint.
func (s *Service) GetWebhookEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string) (out WebhookEndpoint, err error) {
	return out, s.onEndpoint(ctx, platformID, endpointID, false, func(ctx context.Context, q store.Querier, e queries.WebhookEndpoint) error {
		subs, err := q.ListWebhookSubscriptions(ctx, platformID.String())
		if err != nil {
			return err
		}
		if out, err = endpointFromRow(e, subs); err == nil {
			out.EndpointHealth, err = hooks.Health(ctx, q, e.ID)
		}
		return err
	})
}

// UpdateWebhookEndpoint changes the URL, the event types, the description or the kind of
// signature of an endpoint of the platform, keeping its secret (unless the kind changes:
// a new v1 secret is then shown once, or the new public key) and its status.
//
// Returns CodeInvalid when the request fails validation (the URL judged as Create judges
// it) and CodeNotFound when the platform has no such endpoint.
//
// Options: Validated.
func (s *Service) UpdateWebhookEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string, in WebhookEndpointUpdate, opts ...Call) (WebhookEndpoint, error) {
	if _, err := s.validateValue(options(opts).validated, in.requestSchema(), map[string]string{"endpoint_id": endpointID}, nil, in); err != nil {
		return WebhookEndpoint{}, err
	}
	return s.changeEndpoint(ctx, platformID, endpointID, true, func(ctx context.Context, q store.Querier, id string) (queries.WebhookEndpoint, string, error) {
		e, err := q.GetWebhookEndpoint(ctx, queries.GetWebhookEndpointParams{ID: id, PlatformID: platformID.String()})
		if err != nil {
			return e, "", err
		}
		p, err := q.GetPlatform(ctx, e.PlatformID)
		if err == nil {
			err = s.checkWebhookURL(in.URL, Environment(p.Environment))
		}
		if err != nil {
			return e, "", err
		}
		var description **string
		if in.Description.Set {
			description = &in.Description.Value
		}
		if e, err = hooks.Update(ctx, q, e, in.URL, description, in.Events, AllEvents); err != nil {
			return e, "", err
		}
		if asymmetric := in.Signature != nil && *in.Signature == "ed25519"; in.Signature != nil && asymmetric != (e.PublicKey != nil) {
			return s.rekeyEndpoint(ctx, q, platformID, id, asymmetric)
		}
		return e, "", nil
	})
}

// DisableWebhookEndpoint pauses an endpoint of the platform by hand: it receives nothing
// until enabled again (EnableWebhookEndpoint), and the events it missed meanwhile can be
// sent then (RecoverWebhookEndpoint). Disabling a disabled endpoint changes nothing.
//
// Returns CodeInvalid for a malformed id and CodeNotFound when the platform has no such
// endpoint.
func (s *Service) DisableWebhookEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string) (WebhookEndpoint, error) {
	return s.changeEndpoint(ctx, platformID, endpointID, true, func(ctx context.Context, q store.Querier, id string) (queries.WebhookEndpoint, string, error) {
		row, err := q.PauseWebhookEndpoint(ctx, queries.PauseWebhookEndpointParams{Reason: "Disabled by hand.", ID: id, PlatformID: platformID.String()})
		return row, "", err
	})
}

// RecoverWebhookEndpoint queues a new delivery to an enabled endpoint of the platform of
// every event of its types created in the window that it has not received with a 2xx,
// those of the time it was disabled included, and returns how many it queued: an event
// waiting for it already is not queued again.
//
// Returns CodeInvalid when the request fails validation or the window starts more than
// MaxRecoveryAge ago, in the future or after it ends, CodeNotFound when the platform has
// no such endpoint and CodeConflict when it is disabled.
//
// Options: Validated.
func (s *Service) RecoverWebhookEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string, in WebhookRecovery, opts ...Call) (out Recovered, err error) {
	now := s.Now()
	until, bad := hooks.RecoveryWindow(in.Since, in.Until, now)
	if _, err := s.validateValue(options(opts).validated, in.requestSchema(), map[string]string{"endpoint_id": endpointID}, nil, in); err != nil {
		return out, err
	} else if bad != nil {
		return out, invalid(*bad)
	}
	return out, s.onEndpoint(ctx, platformID, endpointID, true, func(ctx context.Context, q store.Querier, e queries.WebhookEndpoint) (err error) {
		if out, err = hooks.Recover(ctx, q, e, in.Since, until, now); out.Queued > 0 {
			s.outbox.MarkDue()
		}
		return err
	})
}

// SendTestWebhook sends an enabled endpoint of the platform, and it alone, a webhook.test
// event, signed and delivered as any event (its attempts are the event's, in GetEvent),
// and returns the event.
//
// Returns CodeInvalid for a malformed id, CodeNotFound when the platform has no such
// endpoint and CodeConflict when it is disabled.
func (s *Service) SendTestWebhook(ctx context.Context, platformID uuid.UUID, endpointID string) (ev Event, err error) {
	return ev, s.onEndpoint(ctx, platformID, endpointID, true, func(ctx context.Context, q store.Querier, e queries.WebhookEndpoint) error {
		p, err := q.GetPlatform(ctx, e.PlatformID)
		if err != nil {
			return err
		}
		var row queries.CreateEventParams
		ev, row, err = s.newEvent(e.PlatformID, Environment(p.Environment), EventWebhookTest,
			EventData{Object: EventObject{Type: "webhook_endpoint", ID: e.ID}})
		if err == nil {
			err = q.CreateEvent(ctx, row)
		}
		if err != nil {
			return err
		}
		s.outbox.MarkDue()
		return q.ResendToEndpoint(ctx, queries.ResendToEndpointParams{EventID: row.ID, EndpointID: e.ID, DueAt: row.CreatedAt})
	})
}

// ListWebhookAttempts returns the attempts to deliver events to an endpoint of the
// platform, newest first, after the attempt whose id is in.After (in.Type is not used).
//
// Returns CodeInvalid when the parameters fail validation or after names no attempt of
// the endpoint, and CodeNotFound when the platform has no such endpoint.
//
// Options: AsSent.
func (s *Service) ListWebhookAttempts(ctx context.Context, platformID uuid.UUID, endpointID string, in EventQuery, opts ...Call) (out WebhookAttemptPage, err error) {
	query := map[string]string{"after": in.After, "limit": in.Limit}
	if err := s.validateAsSent(options(opts).sent, "webhooks_attempts", map[string]string{"endpoint_id": endpointID}, query, "after", "limit"); err != nil {
		return out, err
	}
	limit, _ := strconv.Atoi(cmp.Or(in.Limit, strconv.Itoa(DefaultEventsPerPage))) // the schema allows 1 to 100
	return out, s.onEndpoint(ctx, platformID, endpointID, false, func(ctx context.Context, q store.Querier, e queries.WebhookEndpoint) (err error) {
		if out, err = hooks.Attempts(ctx, q, e.ID, in.After, limit); errors.Is(err, hooks.ErrUnknownCursor) {
			return invalid(FieldError{Type: "value_error", Loc: []any{"query", "after"}, Msg: "Value error, after " + err.Error(), Input: in.After})
		}
		return err
	})
}

// onEndpoint runs fn on an endpoint of the platform, in a write when write is set (else
// a read), refusing an id that is malformed or that the platform does not have, and,
// with write, one disabled.
func (s *Service) onEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string, write bool,
	fn func(ctx context.Context, q store.Querier, e queries.WebhookEndpoint) error) error {
	if err := s.validateEndpointID(endpointID); err != nil {
		return err
	}
	run := func(ctx context.Context, q store.Querier) error {
		e, err := q.GetWebhookEndpoint(ctx, queries.GetWebhookEndpointParams{ID: canonicalID(endpointID), PlatformID: platformID.String()})
		if err != nil {
			return notFound(err, "Webhook endpoint not found.")
		} else if write && e.Status != string(EndpointEnabled) {
			return Errorf(CodeConflict, "Webhook endpoint is disabled: enable it first.")
		}
		return fn(ctx, q, e)
	}
	if write {
		return s.write(ctx, store.WriteOptions{}, run)
	}
	return s.read(ctx, func(q store.Querier) error { return run(ctx, q) })
}

// endpointDisabled tells the platform's other endpoints that one was disabled for its
// failures (outbox.Config.Disabled).
func (s *Service) endpointDisabled(ctx context.Context, q store.Querier, endpointID, reason string) error {
	e, err := q.GetDeliveryEndpoint(ctx, endpointID)
	if err != nil {
		return err
	}
	return s.emitFor(ctx, q, e.PlatformID, EventWebhookEndpointDisabled,
		EventData{Object: EventObject{Type: "webhook_endpoint", ID: endpointID}, Reason: reason})
}

// checkWebhookURL judges a URL sent for an endpoint of a platform of env (nil: none to
// judge): https only for a production platform, whichever service registers the URL.
func (s *Service) checkWebhookURL(url *string, env Environment) error {
	if url == nil {
		return nil
	}
	if err := webhook.CheckURL(*url, env == Production, s.webhookAllow...); err != nil {
		return invalid(FieldError{Type: "url_parsing", Loc: []any{"body", "url"}, Msg: err.Error(), Input: *url})
	}
	return nil
}

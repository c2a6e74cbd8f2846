package payments

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/outbox"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/queries"
)

// Event types of webhooks themselves: a test event (SendTestWebhook) and an endpoint its
// failures disabled, told to the platform's other endpoints.
const (
	EventWebhookTest             = "webhook.test"
	EventWebhookEndpointDisabled = "webhook_endpoint.disabled"
)

// MaxRecoveryAge is how far back RecoverWebhookEndpoint may start: the dispatcher's
// default event retention.
const MaxRecoveryAge = 30 * 24 * time.Hour

// WebhookEndpointUpdate is the body of Update Webhook Endpoint: each member sent replaces
// the endpoint's (under Create's rules), one left out stays, and so do url and events
// sent as null; a description sent as null is removed. The secret stays.
type WebhookEndpointUpdate struct {
	URL         *string      `json:"url,omitempty"`
	Events      []string     `json:"events,omitempty"`
	Description OptionalText `json:"description,omitzero"`
}

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

func (WebhookEndpointUpdate) requestSchema() string { return "webhooks_update" }

// WebhookRecovery is the body of Recover Webhook Endpoint: the window of events, since
// (at most MaxRecoveryAge ago) until (left out: now).
type WebhookRecovery struct {
	Since time.Time  `json:"since"`
	Until *time.Time `json:"until,omitempty"`
}

func (WebhookRecovery) requestSchema() string { return "webhooks_recover" }

// Recovered says how many deliveries a recovery queued.
type Recovered struct {
	EndpointID uuid.UUID `json:"endpoint_id"`
	Queued     int64     `json:"queued"`
}

// WebhookAttempt is one attempt to deliver an event to an endpoint; ID is its place in
// the endpoint's attempts list (the after of the next page).
type WebhookAttempt struct {
	ID          string    `json:"id"`
	EventID     uuid.UUID `json:"event_id"`
	EventType   string    `json:"event_type"`
	Attempt     int64     `json:"attempt"`
	AttemptedAt time.Time `json:"attempted_at"`
	StatusCode  *int64    `json:"status_code"`
	Error       *string   `json:"error"`
	LatencyMS   int64     `json:"latency_ms"`
	Response    string    `json:"response"`
}

// WebhookAttemptPage is a page of an endpoint's attempts, newest first; HasMore says
// whether older ones follow (ask again with after set to the last id).
type WebhookAttemptPage struct {
	Attempts []WebhookAttempt `json:"attempts"`
	HasMore  bool             `json:"has_more"`
}

// GetWebhookEndpoint returns an endpoint of the platform, with its health.
//
// Returns CodeInvalid for a malformed id and CodeNotFound when the platform has no such
// endpoint.
func (s *Service) GetWebhookEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string) (WebhookEndpoint, error) {
	if err := s.validateEndpointID(endpointID); err != nil {
		return WebhookEndpoint{}, err
	}
	var e WebhookEndpoint
	err := s.read(ctx, func(q store.Querier) error {
		row, err := q.GetWebhookEndpoint(ctx, queries.GetWebhookEndpointParams{ID: canonicalID(endpointID), PlatformID: platformID.String()})
		if err != nil {
			return notFound(err, "Webhook endpoint not found.")
		}
		e, err = endpointWithHealth(ctx, q, row, platformID)
		return err
	})
	return e, err
}

// UpdateWebhookEndpoint changes the URL, the event types or the description of an
// endpoint of the platform, keeping its secret and its status.
//
// Returns CodeInvalid when the request fails validation (the URL as Create judges it) and
// CodeNotFound when the platform has no such endpoint.
//
// Options: Validated.
func (s *Service) UpdateWebhookEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string, in WebhookEndpointUpdate, opts ...Call) (WebhookEndpoint, error) {
	if _, err := s.validateValue(options(opts).validated, in.requestSchema(), map[string]string{"endpoint_id": endpointID}, nil, in); err != nil {
		return WebhookEndpoint{}, err
	}
	return s.changeEndpoint(ctx, platformID, endpointID, true, func(ctx context.Context, q store.Querier, id string) (queries.WebhookEndpoint, string, error) {
		p, err := q.GetPlatform(ctx, platformID.String())
		if err != nil {
			return queries.WebhookEndpoint{}, "", err
		}
		row, err := q.GetWebhookEndpoint(ctx, queries.GetWebhookEndpointParams{ID: id, PlatformID: platformID.String()})
		if err != nil {
			return row, "", err
		}
		if err := s.checkWebhookURL(in.URL, Environment(p.Environment)); err != nil {
			return row, "", err
		}
		up := queries.UpdateWebhookEndpointParams{Url: *cmp.Or(in.URL, &row.Url), Description: row.Description,
			AllEvents: row.AllEvents, ID: id, PlatformID: platformID.String()}
		if in.Description.Set {
			up.Description = in.Description.Value
		}
		if in.Events != nil {
			all := slices.Contains(in.Events, AllEvents)
			up.AllEvents = boolInt(all)
			if err := q.ClearWebhookSubscriptions(ctx, id); err != nil {
				return row, "", err
			}
			for _, t := range in.Events {
				if all {
					break
				}
				if err := q.AddWebhookSubscription(ctx, queries.AddWebhookSubscriptionParams{EndpointID: id, Type: t}); err != nil {
					return row, "", err
				}
			}
		}
		row, err = q.UpdateWebhookEndpoint(ctx, up)
		return row, "", err
	})
}

// DisableWebhookEndpoint pauses an endpoint of the platform by hand: it receives nothing
// until enabled again (EnableWebhookEndpoint), and its events meanwhile can be sent then
// (RecoverWebhookEndpoint). Disabling a disabled endpoint changes nothing.
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
// those of the time it was disabled included, and returns how many it queued. An event
// already waiting for it is not queued again.
//
// Returns CodeInvalid when the request fails validation or the window starts more than
// MaxRecoveryAge ago, in the future or after it ends, CodeNotFound when the platform has
// no such endpoint and CodeConflict when it is disabled.
//
// Options: Validated.
func (s *Service) RecoverWebhookEndpoint(ctx context.Context, platformID uuid.UUID, endpointID string, in WebhookRecovery, opts ...Call) (Recovered, error) {
	if _, err := s.validateValue(options(opts).validated, in.requestSchema(), map[string]string{"endpoint_id": endpointID}, nil, in); err != nil {
		return Recovered{}, err
	}
	now := s.Now()
	until := *cmp.Or(in.Until, &now)
	switch {
	case in.Since.Before(now.Add(-MaxRecoveryAge)) || in.Since.After(now):
		return Recovered{}, invalid(FieldError{Type: "value_error", Loc: []any{"body", "since"}, Input: in.Since.Format(time.RFC3339Nano),
			Msg: "Value error, since must be within the last " + strconv.Itoa(int(MaxRecoveryAge/(24*time.Hour))) + " days and not in the future"})
	case !until.After(in.Since):
		return Recovered{}, invalid(FieldError{Type: "value_error", Loc: []any{"body", "until"}, Input: until.Format(time.RFC3339Nano),
			Msg: "Value error, until must be after since"})
	}
	out := Recovered{EndpointID: uuid.MustParse(endpointID)}
	err := s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) (err error) {
		e, err := q.GetWebhookEndpoint(ctx, queries.GetWebhookEndpointParams{ID: out.EndpointID.String(), PlatformID: platformID.String()})
		if err != nil {
			return notFound(err, "Webhook endpoint not found.")
		} else if e.Status != string(EndpointEnabled) {
			return Errorf(CodeConflict, "Webhook endpoint is disabled: enable it first.")
		}
		out.Queued, err = q.RecoverDeliveries(ctx, queries.RecoverDeliveriesParams{EndpointID: e.ID, DueAt: formatTime(now),
			PlatformID: e.PlatformID, Since: formatTime(in.Since), Until: formatTime(until), AllEvents: e.AllEvents})
		if out.Queued > 0 {
			s.outbox.MarkDue()
		}
		return err
	})
	return out, err
}

// SendTestWebhook sends an enabled endpoint of the platform a webhook.test event, signed
// and delivered as any event (its attempts are the event's, in GetEvent), to it alone,
// and returns the event.
//
// Returns CodeInvalid for a malformed id, CodeNotFound when the platform has no such
// endpoint and CodeConflict when it is disabled.
func (s *Service) SendTestWebhook(ctx context.Context, platformID uuid.UUID, endpointID string) (Event, error) {
	if err := s.validateEndpointID(endpointID); err != nil {
		return Event{}, err
	}
	var ev Event
	err := s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		e, err := q.GetWebhookEndpoint(ctx, queries.GetWebhookEndpointParams{ID: canonicalID(endpointID), PlatformID: platformID.String()})
		if err != nil {
			return notFound(err, "Webhook endpoint not found.")
		} else if e.Status != string(EndpointEnabled) {
			return Errorf(CodeConflict, "Webhook endpoint is disabled.")
		}
		p, err := q.GetPlatform(ctx, e.PlatformID)
		if err != nil {
			return err
		}
		ev = Event{ID: newV7(), Type: EventWebhookTest, Timestamp: s.Now(), PlatformID: platformID, Environment: Environment(p.Environment),
			Data: EventData{Object: EventObject{Type: "webhook_endpoint", ID: e.ID}}}
		payload, err := eventJSON(ev)
		if err != nil {
			return err
		}
		at := formatTime(ev.Timestamp)
		if err := q.CreateEvent(ctx, queries.CreateEventParams{ID: ev.ID.String(), PlatformID: e.PlatformID, Type: ev.Type, CreatedAt: at, Payload: string(payload)}); err != nil {
			return err
		}
		s.outbox.MarkDue()
		return q.ResendToEndpoint(ctx, queries.ResendToEndpointParams{EventID: ev.ID.String(), EndpointID: e.ID, DueAt: at})
	})
	return ev, err
}

// ListWebhookAttempts returns attempts to deliver events to an endpoint of the platform,
// newest first, after the attempt q.After (by its id).
//
// Returns CodeInvalid when the parameters fail validation or after names no attempt of
// the endpoint, and CodeNotFound when the platform has no such endpoint.
//
// Options: AsSent.
func (s *Service) ListWebhookAttempts(ctx context.Context, platformID uuid.UUID, endpointID string, in EventQuery, opts ...Call) (WebhookAttemptPage, error) {
	query := map[string]string{"after": in.After, "limit": in.Limit}
	if err := s.validateAsSent(options(opts).sent, "webhooks_attempts", map[string]string{"endpoint_id": endpointID}, query, "after", "limit"); err != nil {
		return WebhookAttemptPage{}, err
	}
	limit := DefaultEventsPerPage
	if in.Limit != "" {
		limit, _ = strconv.Atoi(in.Limit) // the schema allows 1 to 100
	}
	out := WebhookAttemptPage{Attempts: []WebhookAttempt{}}
	err := s.read(ctx, func(q store.Querier) error {
		e, err := q.GetWebhookEndpoint(ctx, queries.GetWebhookEndpointParams{ID: canonicalID(endpointID), PlatformID: platformID.String()})
		if err != nil {
			return notFound(err, "Webhook endpoint not found.")
		}
		attempts, more, err := outbox.EndpointAttempts(ctx, q, e.ID, in.After, limit)
		if errors.Is(err, outbox.ErrUnknownCursor) {
			return invalid(FieldError{Type: "value_error", Loc: []any{"query", "after"}, Msg: "Value error, after " + err.Error(), Input: in.After})
		}
		out.Attempts, out.HasMore = out.Attempts[:0], more
		for _, a := range attempts {
			out.Attempts = append(out.Attempts, WebhookAttempt{ID: a.Cursor, EventID: uuid.MustParse(a.EventID), EventType: a.EventType,
				Attempt: a.Attempt, AttemptedAt: a.At, StatusCode: a.StatusCode, Error: a.Error, LatencyMS: a.LatencyMS, Response: a.Response})
		}
		return err
	})
	return out, err
}

// endpointWithHealth is the API's view of a stored endpoint of the platform with its
// health.
func endpointWithHealth(ctx context.Context, q store.Querier, row queries.WebhookEndpoint, platformID uuid.UUID) (WebhookEndpoint, error) {
	subs, err := q.ListWebhookSubscriptions(ctx, platformID.String())
	if err != nil {
		return WebhookEndpoint{}, err
	}
	e, err := endpointFromRow(row, subs)
	if err != nil {
		return e, err
	}
	return e, e.addHealth(ctx, q)
}

// addHealth reads the endpoint's health into it.
func (e *WebhookEndpoint) addHealth(ctx context.Context, q store.Querier) error {
	h, err := outbox.EndpointHealth(ctx, q, e.ID.String())
	e.EndpointHealth = &EndpointHealth{FailingSince: e.FailingSince, Pending: h.Pending, SuccessRate: h.SuccessRate}
	e.LastSuccessAt, e.LastFailureAt = timeOrNil(h.LastSuccess), timeOrNil(h.LastFailure)
	return err
}

// endpointDisabled tells the platform's other endpoints that its failures disabled one
// (outbox.Config.Disabled).
func (s *Service) endpointDisabled(ctx context.Context, q store.Querier, endpointID, reason string) error {
	e, err := q.GetDeliveryEndpoint(ctx, endpointID)
	if err != nil {
		return err
	}
	p, err := q.GetPlatform(ctx, e.PlatformID)
	if err != nil {
		return err
	}
	return s.emit(ctx, q, e.PlatformID, Environment(p.Environment), EventWebhookEndpointDisabled,
		EventData{Object: EventObject{Type: "webhook_endpoint", ID: endpointID}, Reason: reason})
}

// checkWebhookURL judges a URL sent for an endpoint of a platform of env (none: nothing
// to judge); https only for a production platform, whichever service registers the URL.
func (s *Service) checkWebhookURL(url *string, env Environment) error {
	if url == nil {
		return nil
	}
	if err := webhook.CheckURL(*url, env == Production, s.webhookAllow...); err != nil {
		return invalid(FieldError{Type: "url_parsing", Loc: []any{"body", "url"}, Msg: err.Error(), Input: *url})
	}
	return nil
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

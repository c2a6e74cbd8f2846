package payments

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/hooks"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// Event types: one per operation that changes something, named as what happened.
const (
	EventUserCreated               = "user.created"
	EventUserVerificationSucceeded = "user.verification.succeeded"
	EventUserVerificationFailed    = "user.verification.failed"
	EventBankAccountAdded          = "bank_account.added"
	EventCardAdded                 = "card.added"
	EventCardDeleted               = "card.deleted"
	EventPayeeCreated              = "payee.created"
	EventPayeeUpdated              = "payee.updated"
	EventPayeeBankAdded            = "payee_bank.added"
	EventPayeeBankDeleted          = "payee_bank.deleted"
	EventPayeeAddressAdded         = "payee_address.added"
	EventExchangeRateUpdated       = "exchange_rate.updated"
	EventPayeeRulesUpdated         = "payee_rules.updated"
	// EventWebhookTest and EventWebhookEndpointDisabled are in webhook_ops.go.
)

// EventTypes returns every event type, in the order the documentation lists them.
func EventTypes() []string {
	return []string{
		EventUserCreated, EventUserVerificationSucceeded, EventUserVerificationFailed,
		EventBankAccountAdded, EventCardAdded, EventCardDeleted,
		EventPayeeCreated, EventPayeeUpdated, EventPayeeBankAdded, EventPayeeBankDeleted,
		EventPayeeAddressAdded, EventExchangeRateUpdated, EventPayeeRulesUpdated,
		EventWebhookTest, EventWebhookEndpointDisabled,
	}
}

// DefaultEventsPerPage is how many events the list shows when not told; at most 100 may
// be asked for (schema/events_list.json).
const DefaultEventsPerPage = 20

// Event is something that happened to a platform's data, as the events API shows it and
// as a webhook delivers it (the body of a delivery is exactly its JSON). It is thin: the
// ids that locate what changed and state that is not sensitive; the receiver fetches the
// rest through the API.
type Event struct {
	ID          uuid.UUID   `json:"id"` // time-ordered: the events list's cursor
	Type        string      `json:"type"`
	Timestamp   time.Time   `json:"timestamp"`
	PlatformID  uuid.UUID   `json:"platform_id"`
	Environment Environment `json:"environment"`
	Data        EventData   `json:"data"`
}

// EventData is what an event says about what changed.
type EventData struct {
	Object EventObject `json:"object"`
	// Reason is why an identity verification failed (user.verification.failed).
	Reason string `json:"reason,omitempty"`
	// Changed names the fields an update changed (payee.updated).
	Changed *[]string `json:"changed,omitempty"`
}

// EventObject locates what an event is about: its type and id, and the ids of what it
// belongs to. An exchange rate also carries its pair and value, a rule set the countries
// it covers.
type EventObject struct {
	Type           string   `json:"type"`
	ID             string   `json:"id"`
	UserID         string   `json:"user_id,omitempty"`
	PayeeID        string   `json:"payee_id,omitempty"`
	BaseCurrency   string   `json:"base_currency,omitempty"`
	PayoutCurrency string   `json:"payout_currency,omitempty"`
	ExchangeRate   Decimal  `json:"exchange_rate,omitempty"`
	Countries      []string `json:"countries,omitempty"`
}

// EventPage is one page of a platform's events, in the list's order; HasMore says whether
// later events exist (ask again with after set to the last id).
type EventPage struct {
	Events  []Event `json:"events"`
	HasMore bool    `json:"has_more"`
}

// EventQuery selects events of the list: after an event id (exclusive), of one type, at
// most Limit (DefaultEventsPerPage when left out, at most 100). Its fields are the
// query parameters as sent, "" for one left out.
type EventQuery struct {
	After, Type, Limit string
}

// emit records an event of the platform in q's transaction, that of the change it tells
// of, with a pending delivery to each enabled endpoint of the platform subscribed to its
// type: the event and the change commit, or roll back, together.
func (s *Service) emit(ctx context.Context, q store.Querier, platformID string, env Environment, typ string, data EventData) error {
	_, row, err := s.newEvent(platformID, env, typ, data)
	if err != nil {
		return err
	}
	n, err := q.RecordEvent(ctx, row)
	if n > 0 {
		s.outbox.MarkDue()
	}
	return err
}

// newEvent is a new event of the platform, and its row.
func (s *Service) newEvent(platformID string, env Environment, typ string, data EventData) (Event, queries.CreateEventParams, error) {
	ev := Event{ID: newV7(), Type: typ, Timestamp: s.Now(), PlatformID: uuid.MustParse(platformID), Environment: env, Data: data}
	payload, err := json.Marshal(ev)
	return ev, queries.CreateEventParams{
		ID: ev.ID.String(), PlatformID: platformID, Type: typ, CreatedAt: formatTime(ev.Timestamp), Payload: string(payload),
	}, err
}

// emitFor records an event of any platform (an administrative change, or the
// dispatcher's), in the environment of the platform.
func (s *Service) emitFor(ctx context.Context, q store.Querier, platformID string, typ string, data EventData) error {
	p, err := q.GetPlatform(ctx, platformID)
	if err != nil {
		return err
	}
	return s.emit(ctx, q, platformID, Environment(p.Environment), typ, data)
}

// emitGlobal records an event about the whole deployment (rates, payee rules) for every
// platform with an endpoint subscribed to its type.
func (s *Service) emitGlobal(ctx context.Context, q store.Querier, typ string, data EventData) error {
	platforms, err := q.SubscribedPlatforms(ctx, typ)
	if err != nil {
		return err
	}
	for _, p := range platforms {
		if err := s.emit(ctx, q, p.ID, Environment(p.Environment), typ, data); err != nil {
			return err
		}
	}
	return nil
}

// ListEvents returns the platform's events after the event q.After, in the order they
// become listable: following the last id seen misses none (docs/webhooks.md). It
// returns CodeInvalid when the parameters fail validation.
//
// Options: AsSent.
func (s *Service) ListEvents(ctx context.Context, platformID uuid.UUID, in EventQuery, opts ...Call) (EventPage, error) {
	query := map[string]string{"after": in.After, "type": in.Type, "limit": in.Limit}
	if err := s.validateAsSent(options(opts).sent, "events_list", nil, query, "after", "type", "limit"); err != nil {
		return EventPage{}, err
	}
	limit := int64(DefaultEventsPerPage)
	if in.Limit != "" {
		limit, _ = strconv.ParseInt(in.Limit, 10, 64) // the schema allows 1 to 100
	}
	after := ""
	if in.After != "" {
		after = canonicalID(in.After)
	}
	out := EventPage{Events: []Event{}}
	err := s.query(ctx, func(q store.Querier) error {
		rows, err := q.ListEvents(ctx, queries.ListEventsParams{
			PlatformID: platformID.String(), AfterID: after, Type: in.Type, PageSize: limit + 1,
		})
		if err != nil {
			return err
		}
		if out.HasMore = int64(len(rows)) > limit; out.HasMore {
			rows = rows[:limit]
		}
		for _, r := range rows {
			var ev Event
			if err := jsonUnmarshal(r.Payload, &ev); err != nil {
				return err
			}
			out.Events = append(out.Events, ev)
		}
		return nil
	})
	return out, err
}

// EventDetail is an event with the attempts to deliver it, oldest first.
type EventDetail struct {
	Event
	Attempts []DeliveryAttempt `json:"attempts"`
}

// DeliveryAttempt is one attempt to deliver an event to an endpoint (package
// internal/hooks has its fields).
type DeliveryAttempt = hooks.DeliveryAttempt

// GetEvent returns an event of the platform and the attempts to deliver it.
//
// Returns CodeInvalid for a malformed id and CodeNotFound when the platform has no such
// event.
func (s *Service) GetEvent(ctx context.Context, platformID uuid.UUID, eventID string) (EventDetail, error) {
	if _, err := s.validate("events_get", map[string]string{"event_id": eventID}, nil, nil); err != nil {
		return EventDetail{}, err
	}
	var out EventDetail
	err := s.read(ctx, func(q store.Querier) error {
		r, err := q.GetPlatformEvent(ctx, queries.GetPlatformEventParams{ID: canonicalID(eventID), PlatformID: platformID.String()})
		if err != nil {
			return notFound(err, "Event not found.")
		}
		if err := jsonUnmarshal(r.Payload, &out.Event); err != nil {
			return err
		}
		out.Attempts, err = hooks.EventAttempts(ctx, q, r.ID)
		return err
	})
	return out, err
}

// Resend is the body of Resend Event: one endpoint, or (left out) every enabled endpoint
// subscribed to the event's type.
type Resend struct {
	EndpointID *string `json:"endpoint_id,omitempty"`
}

func (Resend) requestSchema() string { return "events_resend" }

// Resent names the endpoints an event is to be delivered to again.
type Resent struct {
	EventID     uuid.UUID   `json:"event_id"`
	EndpointIDs []uuid.UUID `json:"endpoint_ids"`
}

// ResendEvent delivers an event again, now, to one endpoint of the platform or to every
// enabled one subscribed to its type, whatever became of earlier deliveries: each
// starts the retry schedule afresh.
//
// Returns CodeInvalid when the request fails validation, CodeNotFound when the platform
// has no such event or endpoint, and CodeConflict when the endpoint is disabled.
//
// Options: Validated.
func (s *Service) ResendEvent(ctx context.Context, platformID uuid.UUID, eventID string, in Resend, opts ...Call) (Resent, error) {
	if _, err := s.validateValue(options(opts).validated, in.requestSchema(), map[string]string{"event_id": eventID}, nil, in); err != nil {
		return Resent{}, err
	}
	out := Resent{EventID: uuid.MustParse(eventID), EndpointIDs: []uuid.UUID{}}
	err := s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		out.EndpointIDs = out.EndpointIDs[:0]
		ev, err := q.GetPlatformEvent(ctx, queries.GetPlatformEventParams{ID: out.EventID.String(), PlatformID: platformID.String()})
		if err != nil {
			return notFound(err, "Event not found.")
		}
		endpoints, err := s.platformEndpoints(ctx, q, platformID)
		if err != nil {
			return err
		}
		for _, e := range endpoints {
			switch {
			case in.EndpointID != nil && e.ID.String() != canonicalID(*in.EndpointID):
				continue
			case in.EndpointID != nil && e.Status != EndpointEnabled:
				return Errorf(CodeConflict, "Webhook endpoint is disabled.")
			case in.EndpointID == nil && (e.Status != EndpointEnabled || !e.subscribed(ev.Type)):
				continue
			}
			out.EndpointIDs = append(out.EndpointIDs, e.ID)
		}
		if in.EndpointID != nil && len(out.EndpointIDs) == 0 {
			return Errorf(CodeNotFound, "Webhook endpoint not found.")
		}
		if len(out.EndpointIDs) > 0 {
			s.outbox.MarkDue()
		}
		return hooks.Resend(ctx, q, ev.ID, out.EndpointIDs, s.Now())
	})
	return out, err
}

// subscribed reports whether the endpoint receives events of the type.
func (e WebhookEndpoint) subscribed(typ string) bool {
	return slices.Contains(e.Events, AllEvents) || slices.Contains(e.Events, typ)
}

// Package hooks is what the payments service does with one webhook endpoint beyond
// creating, listing and deleting it: its health, its attempts list, an update of its
// settings and the recovery of the events it missed; and with one event's deliveries:
// their attempts and a resend. Package payments names its answers' types
// (EndpointHealth, WebhookAttempt, WebhookAttemptPage, Recovered, DeliveryAttempt).
//
// An endpoint's attempts are kept in two places: its deliveries' rows hold each one's
// success (most deliveries succeed at once), webhook_attempts every other attempt. What
// follows reads both as one log, newest first.
package hooks

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/stored"
	"github.com/platform-payments/payments/internal/validate"
	"github.com/platform-payments/payments/queries"
)

// HealthWindow is how many of an endpoint's latest attempts its success rate counts.
const HealthWindow = 100

// MaxRecoveryAge is how far back a recovery may start: the dispatcher's default event
// retention.
const MaxRecoveryAge = 30 * 24 * time.Hour

// EndpointHealth is how an endpoint's deliveries fare: its last attempt answered with a
// 2xx and its last one not, when its current run of failures began, how many deliveries
// wait, and the share of its last 100 attempts that succeeded (0 to 1, null before the
// first).
type EndpointHealth struct {
	LastSuccessAt *time.Time `json:"last_success_at"`
	LastFailureAt *time.Time `json:"last_failure_at"`
	FailingSince  *time.Time `json:"failing_since"`
	Pending       int64      `json:"pending"`
	SuccessRate   *float64   `json:"success_rate"`
}

// WebhookAttempt is one attempt to deliver an event to an endpoint: when, the receiver's
// status or the error that stood for an answer, the time it took and the start of the
// answer. ID is its place in the endpoint's attempts list (the after of the next page).
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

// Recovered says how many deliveries a recovery queued.
type Recovered struct {
	EndpointID uuid.UUID `json:"endpoint_id"`
	Queued     int64     `json:"queued"`
}

// Health reads the health of the endpoint.
func Health(ctx context.Context, q store.Querier, endpointID string) (*EndpointHealth, error) {
	h := &EndpointHealth{}
	row, err := q.EndpointHealth(ctx, endpointID)
	if err != nil {
		return nil, err
	}
	h.Pending = row.Pending
	for _, t := range []struct {
		to   **time.Time
		from string
	}{{&h.LastSuccessAt, max(row.DeliverySuccess, row.AttemptSuccess)}, {&h.LastFailureAt, row.Failure}, {&h.FailingSince, row.FailingSince}} {
		if t.from == "" {
			continue
		}
		at, err := stored.ParseTime(t.from)
		if err != nil {
			return nil, err
		}
		*t.to = &at
	}
	recent, err := Attempts(ctx, q, endpointID, "", HealthWindow)
	if err != nil || len(recent.Attempts) == 0 {
		return h, err
	}
	ok := 0
	for _, a := range recent.Attempts {
		if succeeded(a) {
			ok++
		}
	}
	h.SuccessRate = new(float64(ok) / float64(len(recent.Attempts)))
	return h, nil
}

// succeeded reports whether the attempt was answered with a 2xx.
func succeeded(a WebhookAttempt) bool {
	return a.Error == nil && a.StatusCode != nil && *a.StatusCode >= 200 && *a.StatusCode <= 299
}

// ErrUnknownCursor is Attempts' error for an after that names no attempt of the endpoint.
var ErrUnknownCursor = errors.New("names no attempt of this endpoint")

// Attempts returns up to limit attempts of the endpoint, newest first (by time, then
// successes before other attempts, then by id, descending), after the attempt whose ID is
// after ("" for the newest). An ID is "a" and the attempt's webhook_attempts id, or "s"
// and the id of the delivery whose success it is.
func Attempts(ctx context.Context, q store.Querier, endpointID, after string, limit int) (WebhookAttemptPage, error) {
	page := WebhookAttemptPage{Attempts: []WebhookAttempt{}}
	var beforeAt string
	var beforeA, beforeS int64 // the ids below which attempts at beforeAt follow the cursor
	if after != "" {
		id, err := strconv.ParseInt(after[1:], 10, 64)
		if err != nil {
			return page, ErrUnknownCursor
		}
		if after[0] == 'a' {
			beforeAt, err = q.AttemptTime(ctx, queries.AttemptTimeParams{ID: id, EndpointID: endpointID})
			beforeA, beforeS = id, 0 // every success at that time comes before it
		} else {
			beforeAt, err = q.SuccessTime(ctx, queries.SuccessTimeParams{ID: id, EndpointID: endpointID})
			beforeA, beforeS = 1<<62, id // every attempt at that time comes after it
		}
		if errors.Is(err, sql.ErrNoRows) || err == nil && beforeAt == "" {
			return page, ErrUnknownCursor
		} else if err != nil {
			return page, err
		}
	}
	n := int64(limit) + 1
	attempts, err := q.EndpointAttempts(ctx, queries.EndpointAttemptsParams{EndpointID: endpointID, BeforeAt: beforeAt, BeforeID: beforeA, PageSize: n})
	if err != nil {
		return page, err
	}
	successes, err := q.EndpointSuccesses(ctx, queries.EndpointSuccessesParams{EndpointID: endpointID, BeforeAt: beforeAt, BeforeID: beforeS, PageSize: n})
	if err != nil {
		return page, err
	}
	type keyed struct {
		at, kind, event string
		id              int64
		a               WebhookAttempt
	}
	all := make([]keyed, 0, len(attempts)+len(successes))
	for _, r := range attempts {
		all = append(all, keyed{r.AttemptedAt, "a", r.EventID, r.ID, WebhookAttempt{EventType: r.Type, Attempt: r.Attempt,
			StatusCode: r.StatusCode, Error: r.Error, LatencyMS: r.LatencyMs, Response: r.Response}})
	}
	for _, r := range successes {
		all = append(all, keyed{r.AttemptedAt, "s", r.EventID, r.ID, WebhookAttempt{EventType: r.Type, Attempt: r.Attempt,
			StatusCode: new(r.StatusCode), LatencyMS: r.LatencyMs, Response: r.Response}})
	}
	slices.SortFunc(all, func(x, y keyed) int {
		return -cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.kind, y.kind), cmp.Compare(x.id, y.id))
	})
	page.HasMore = len(all) > limit
	for _, k := range all[:min(len(all), limit)] {
		a := k.a
		a.ID = k.kind + strconv.FormatInt(k.id, 10)
		if a.EventID, err = uuid.Parse(k.event); err != nil {
			return page, err
		}
		if a.AttemptedAt, err = stored.ParseTime(k.at); err != nil {
			return page, err
		}
		page.Attempts = append(page.Attempts, a)
	}
	return page, nil
}

// RecoveryWindow checks the window of a recovery asked for at now, since until (nil:
// now), and returns its end; a window that starts more than MaxRecoveryAge ago or in the
// future, or ends before it starts, is refused with the entry of the 422.
func RecoveryWindow(since time.Time, until *time.Time, now time.Time) (time.Time, *validate.FieldError) {
	end := *cmp.Or(until, &now)
	switch {
	case since.Before(now.Add(-MaxRecoveryAge)) || since.After(now):
		return end, &validate.FieldError{Type: "value_error", Loc: []any{"body", "since"}, Input: since.Format(time.RFC3339Nano),
			Msg: fmt.Sprintf("Value error, since must be within the last %d days and not in the future", MaxRecoveryAge/(24*time.Hour))}
	case !end.After(since):
		return end, &validate.FieldError{Type: "value_error", Loc: []any{"body", "until"}, Input: end.Format(time.RFC3339Nano),
			Msg: "Value error, until must be after since"}
	}
	return end, nil
}

// Recover queues a delivery to the endpoint, due at now, of each event of its platform
// created in [since, until) of the types it takes, but test events, that it has not
// received with a 2xx: a new one, or a failed one due again; one waiting already is left
// as it is. It returns how many it queued.
func Recover(ctx context.Context, q store.Querier, e queries.WebhookEndpoint, since, until, now time.Time) (Recovered, error) {
	n, err := q.RecoverDeliveries(ctx, queries.RecoverDeliveriesParams{EndpointID: e.ID, DueAt: stored.Time(now),
		PlatformID: e.PlatformID, Since: stored.Time(since), Until: stored.Time(until), AllEvents: e.AllEvents})
	return Recovered{EndpointID: uuid.MustParse(e.ID), Queued: n}, err
}

// Update sets the endpoint e's URL and description to those given (nil: as they are) and,
// when events is not nil, its types (every type when it holds all), and returns it as
// it leaves it.
func Update(ctx context.Context, q store.Querier, e queries.WebhookEndpoint, url *string, description **string, events []string, all string) (queries.WebhookEndpoint, error) {
	up := queries.UpdateWebhookEndpointParams{Url: *cmp.Or(url, &e.Url), Description: *cmp.Or(description, &e.Description),
		AllEvents: e.AllEvents, ID: e.ID, PlatformID: e.PlatformID}
	if events != nil {
		up.AllEvents = 0
		if slices.Contains(events, all) {
			up.AllEvents, events = 1, nil
		}
		if err := q.ClearWebhookSubscriptions(ctx, e.ID); err != nil {
			return e, err
		}
		for _, t := range events {
			if err := q.AddWebhookSubscription(ctx, queries.AddWebhookSubscriptionParams{EndpointID: e.ID, Type: t}); err != nil {
				return e, err
			}
		}
	}
	return q.UpdateWebhookEndpoint(ctx, up)
}

// DeliveryAttempt is one attempt to deliver an event to an endpoint: the receiver's
// status, or the error that stood for an answer, the time it took and the start of what
// the receiver answered.
type DeliveryAttempt struct {
	EndpointID  uuid.UUID `json:"endpoint_id"`
	Attempt     int64     `json:"attempt"`
	AttemptedAt time.Time `json:"attempted_at"`
	StatusCode  *int64    `json:"status_code"`
	Error       *string   `json:"error"`
	LatencyMS   int64     `json:"latency_ms"`
	Response    string    `json:"response"`
}

// EventAttempts returns the attempts to deliver an event, oldest first.
func EventAttempts(ctx context.Context, q store.Querier, eventID string) ([]DeliveryAttempt, error) {
	rows, err := q.ListEventAttempts(ctx, eventID)
	if err != nil {
		return nil, err
	}
	out := make([]DeliveryAttempt, 0, len(rows))
	for _, a := range rows {
		at, err := stored.ParseTime(a.AttemptedAt)
		if err != nil {
			return nil, err
		}
		out = append(out, DeliveryAttempt{
			EndpointID: uuid.MustParse(a.EndpointID), Attempt: a.Attempt, AttemptedAt: at,
			StatusCode: a.StatusCode, Error: a.Error, LatencyMS: a.LatencyMs, Response: a.Response,
		})
	}
	return out, nil
}

// Resend queues an event again, due at now, for each endpoint, whatever became of its
// earlier delivery: a success is kept as an attempt, and the retry schedule starts afresh.
func Resend(ctx context.Context, q store.Querier, eventID string, endpointIDs []uuid.UUID, now time.Time) error {
	for _, id := range endpointIDs {
		if err := q.HoldDelivery(ctx, queries.HoldDeliveryParams{EventID: eventID, EndpointID: id.String()}); err != nil {
			return err
		}
		if err := q.KeepSuccessAsAttempt(ctx, queries.KeepSuccessAsAttemptParams{EventID: eventID, EndpointID: id.String()}); err != nil {
			return err
		}
		if err := q.ResendToEndpoint(ctx, queries.ResendToEndpointParams{
			EventID: eventID, EndpointID: id.String(), DueAt: stored.Time(now),
		}); err != nil {
			return err
		}
	}
	return nil
}

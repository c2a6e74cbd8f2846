package outbox

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/stored"
	"github.com/platform-payments/payments/queries"
)

// An endpoint's attempts are kept in two places: its deliveries' rows hold each one's
// success (most deliveries succeed at once), webhook_attempts every other attempt. What
// follows reads both as one log, newest first.

// HealthWindow is how many of an endpoint's latest attempts its success rate counts.
const HealthWindow = 100

// Health is an endpoint's health as its attempts show it.
type Health struct {
	LastSuccess, LastFailure time.Time // zero for none
	Pending                  int64     // deliveries waiting to be sent or retried
	// SuccessRate is the share of its last HealthWindow attempts that succeeded, from 0
	// to 1; nil before its first attempt.
	SuccessRate *float64
}

// EndpointHealth reads the health of the endpoint.
func EndpointHealth(ctx context.Context, q store.Querier, endpointID string) (Health, error) {
	var h Health
	row, err := q.EndpointHealth(ctx, endpointID)
	if err != nil {
		return h, err
	}
	h.Pending = row.Pending
	for _, t := range []struct {
		to   *time.Time
		from string
	}{{&h.LastSuccess, max(row.DeliverySuccess, row.AttemptSuccess)}, {&h.LastFailure, row.Failure}} {
		if t.from == "" {
			continue
		}
		if *t.to, err = stored.ParseTime(t.from); err != nil {
			return h, err
		}
	}
	recent, _, err := EndpointAttempts(ctx, q, endpointID, "", HealthWindow)
	if err != nil || len(recent) == 0 {
		return h, err
	}
	ok := 0
	for _, a := range recent {
		if a.Succeeded() {
			ok++
		}
	}
	h.SuccessRate = new(float64(ok) / float64(len(recent)))
	return h, nil
}

// Attempt is one attempt to deliver an event to an endpoint.
type Attempt struct {
	// Cursor names the attempt in the endpoint's log: "a" and its webhook_attempts id, or
	// "s" and the id of the delivery whose success it is.
	Cursor     string
	EventID    string
	EventType  string
	Attempt    int64
	At         time.Time
	StatusCode *int64
	Error      *string
	LatencyMS  int64
	Response   string
}

// Succeeded reports whether the attempt was answered with a 2xx.
func (a Attempt) Succeeded() bool {
	return a.Error == nil && a.StatusCode != nil && *a.StatusCode >= 200 && *a.StatusCode <= 299
}

// ErrUnknownCursor is EndpointAttempts' error for an after that names no attempt of the
// endpoint.
var ErrUnknownCursor = errors.New("names no attempt of this endpoint")

// EndpointAttempts returns up to limit attempts of the endpoint, newest first (by time,
// then successes before other attempts, then by id, descending), after the attempt whose
// Cursor is after ("" for the newest), and whether more follow.
func EndpointAttempts(ctx context.Context, q store.Querier, endpointID, after string, limit int) ([]Attempt, bool, error) {
	var beforeAt string
	var beforeA, beforeS int64 // the ids below which attempts at beforeAt follow the cursor
	if after != "" {
		id, err := strconv.ParseInt(after[1:], 10, 64)
		if err != nil {
			return nil, false, ErrUnknownCursor
		}
		if after[0] == 'a' {
			beforeAt, err = q.AttemptTime(ctx, queries.AttemptTimeParams{ID: id, EndpointID: endpointID})
			beforeA, beforeS = id, 0 // every success at that time comes before it
		} else {
			beforeAt, err = q.SuccessTime(ctx, queries.SuccessTimeParams{ID: id, EndpointID: endpointID})
			beforeA, beforeS = 1<<62, id // every attempt at that time comes after it
		}
		if errors.Is(err, sql.ErrNoRows) || err == nil && beforeAt == "" {
			return nil, false, ErrUnknownCursor
		} else if err != nil {
			return nil, false, err
		}
	}
	n := int64(limit) + 1
	attempts, err := q.EndpointAttempts(ctx, queries.EndpointAttemptsParams{EndpointID: endpointID, BeforeAt: beforeAt, BeforeID: beforeA, PageSize: n})
	if err != nil {
		return nil, false, err
	}
	successes, err := q.EndpointSuccesses(ctx, queries.EndpointSuccessesParams{EndpointID: endpointID, BeforeAt: beforeAt, BeforeID: beforeS, PageSize: n})
	if err != nil {
		return nil, false, err
	}
	type keyed struct {
		at   string
		kind byte
		id   int64
		a    Attempt
	}
	all := make([]keyed, 0, len(attempts)+len(successes))
	for _, r := range attempts {
		all = append(all, keyed{r.AttemptedAt, 'a', r.ID, Attempt{Cursor: "a" + strconv.FormatInt(r.ID, 10),
			EventID: r.EventID, EventType: r.Type, Attempt: r.Attempt, StatusCode: r.StatusCode, Error: r.Error,
			LatencyMS: r.LatencyMs, Response: r.Response}})
	}
	for _, r := range successes {
		all = append(all, keyed{r.AttemptedAt, 's', r.ID, Attempt{Cursor: "s" + strconv.FormatInt(r.ID, 10),
			EventID: r.EventID, EventType: r.Type, Attempt: r.Attempt, StatusCode: new(r.StatusCode),
			LatencyMS: r.LatencyMs, Response: r.Response}})
	}
	slices.SortFunc(all, func(x, y keyed) int {
		return -cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.kind, y.kind), cmp.Compare(x.id, y.id))
	})
	more := len(all) > limit
	all = all[:min(len(all), limit)]
	out := make([]Attempt, len(all))
	for i, k := range all {
		if k.a.At, err = stored.ParseTime(k.at); err != nil {
			return nil, false, err
		}
		out[i] = k.a
	}
	return out, more, nil
}

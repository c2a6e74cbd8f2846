package pgqueries

import (
	"context"
	"encoding/json"

	"github.com/platform-payments/payments/queries"
)

// EmittedEvent is an event as EmitEvents reads it.
type EmittedEvent struct {
	ID         string `json:"id"`
	PlatformID string `json:"platform_id"`
	Type       string `json:"type"`
	CreatedAt  string `json:"created_at"`
	Payload    string `json:"payload"`
}

// RecordEvent writes the event and its deliveries in one statement (EmitEvents): under a
// platform's counter lock, a round trip saved is one less wait for every create after it.
func (a Adapter) RecordEvent(ctx context.Context, e queries.CreateEventParams) (int64, error) {
	return a.EmitEvents(ctx, []EmittedEvent{EmittedEvent(e)})
}

// EmitEvents writes the events and their deliveries in one statement, and returns how
// many deliveries it wrote. An event whose platform does not exist fails the statement:
// the database's own error, which aborts the transaction.
func (a Adapter) EmitEvents(ctx context.Context, events []EmittedEvent) (int64, error) {
	raw, err := json.Marshal(events)
	if err != nil {
		return 0, err
	}
	return a.Q.EmitEvents(ctx, raw)
}

// EmitEventsStatement returns EmitEvents's statement and arguments, for a caller that
// sends it with others and reads its answer (the deliveries written) itself.
func EmitEventsStatement(events []EmittedEvent) (sql string, args []any, err error) {
	raw, err := json.Marshal(events)
	if err != nil {
		return "", nil, err
	}
	return emitEvents, []any{raw}, nil
}

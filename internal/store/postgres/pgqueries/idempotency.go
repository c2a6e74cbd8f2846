package pgqueries

import (
	"context"
	"encoding/json"

	"github.com/platform-payments/payments/queries"
)

// expiredKeyJSON is a key as DeleteExpiredIdempotencyKeys reads it.
type expiredKeyJSON struct {
	Scope    string `json:"scope"`
	Key      string `json:"key"`
	NotAfter string `json:"not_after"`
}

// DeleteExpiredIdempotencyKeys is DeleteExpiredIdempotencyKey for each of keys, in one
// statement.
func (a Adapter) DeleteExpiredIdempotencyKeys(ctx context.Context, keys []queries.DeleteExpiredIdempotencyKeyParams) error {
	given := make([]expiredKeyJSON, len(keys))
	for i, k := range keys {
		given[i] = expiredKeyJSON{Scope: k.Scope, Key: k.Key, NotAfter: k.NotAfter}
	}
	raw, err := json.Marshal(given)
	if err != nil {
		return err
	}
	return a.Q.DeleteExpiredIdempotencyKeys(ctx, raw)
}

// recordJSON is a record as CreateIdempotencyRecords reads it (the fingerprint in base64,
// as encoding/json writes a []byte).
type recordJSON struct {
	ID            string  `json:"id"`
	Scope         string  `json:"scope"`
	Key           string  `json:"key"`
	Fingerprint   []byte  `json:"fingerprint"`
	ErrorCode     *string `json:"error_code"`
	ErrorMessage  *string `json:"error_message"`
	Status        *int64  `json:"status"`
	OutcomeSealed string  `json:"outcome_sealed"`
	CreatedAt     string  `json:"created_at"`
}

// CreateIdempotencyRecords is CreateIdempotencyRecord for each of records, in one
// statement: a duplicate key fails them all.
func (a Adapter) CreateIdempotencyRecords(ctx context.Context, records []queries.CreateIdempotencyRecordParams) error {
	given := make([]recordJSON, len(records))
	for i, r := range records {
		given[i] = recordJSON(r)
	}
	raw, err := json.Marshal(given)
	if err != nil {
		return err
	}
	return a.Q.CreateIdempotencyRecords(ctx, raw)
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// The committer's own statements for Create User, the write a platform makes most: the
// queries shared with PostgreSQL raise the platform's count (CountNewUser), then insert
// the user numbered by reading that count back and return the whole row as stored
// (CreateUser ... RETURNING *). On the committer's connection, the count comes back from
// the UPDATE itself and the user's row is the one given, so the insert neither reads the
// platform again nor decodes a row: the rows written are the same.
//
// A batch's transaction is the only writer of the file while it runs (BEGIN IMMEDIATE),
// and the count is written by these statements alone, so once one operation of a batch
// has read a platform's count back, the next one of that platform knows it: it raises the
// count without RETURNING (which builds a table for the rows it returns, then a result
// set to read them from) and numbers its user one past. The counts known are forgotten at
// each batch's start and whenever an operation fails (its savepoint undoes its raise).
const (
	raiseUserCount  = `UPDATE platforms SET user_count = user_count + 1 WHERE id = ? RETURNING user_count`
	raiseKnownCount = `UPDATE platforms SET user_count = user_count + 1 WHERE id = ?`
	insertUser      = `INSERT INTO users (id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// Whether FanOutEvent can find an endpoint of the platform (RecordEvent).
	hasEndpoints = `SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE platform_id = ? AND status = 'enabled' AND deleted_at IS NULL)`
)

// writeQuerier is the committer's querier: the statements prepared on its connection,
// and its own for CreateUserRows and RecordEvent.
type writeQuerier struct {
	querier
	raiseUserCount, raiseKnownCount, insertUser, hasEndpoints *sql.Stmt
	// counts are the user counts of platforms the batch's transaction has raised so far,
	// by platform id; endpointless the platforms it has found without an enabled
	// endpoint. The committer clears both (batchKnowledge).
	batchKnowledge
}

// batchKnowledge is what a batch's transaction has learnt of the rows only it writes
// while it runs, to spare its later operations a statement: forgotten at the batch's
// start and whenever an operation fails.
type batchKnowledge struct {
	counts       knownCounts
	endpointless map[string]bool
}

func (k batchKnowledge) forget() {
	clear(k.counts)
	clear(k.endpointless)
}

// knownCounts are the user counts a batch has written, by platform id.
type knownCounts map[string]int64

// RecordEvent runs CreateEvent and FanOutEvent, as querier.RecordEvent does, but for a
// platform the batch has found without an enabled endpoint, whose fan-out would write
// nothing: one look per platform and batch instead of a fan-out per event. The endpoints'
// every write below forgets what was found.
func (q writeQuerier) RecordEvent(ctx context.Context, e queries.CreateEventParams) (int64, error) {
	if err := q.CreateEvent(ctx, e); err != nil {
		return 0, err
	}
	if q.endpointless[e.PlatformID] {
		return 0, nil
	}
	var has bool
	if err := q.hasEndpoints.QueryRowContext(ctx, e.PlatformID).Scan(&has); err != nil {
		return 0, err
	}
	if !has {
		q.endpointless[e.PlatformID] = true
		return 0, nil
	}
	return q.FanOutEvent(ctx, queries.FanOutEventParams{EventID: e.ID, DueAt: e.CreatedAt, PlatformID: e.PlatformID, Type: e.Type})
}

// The writes of webhook endpoints and their subscriptions: each forgets which platforms
// have no enabled endpoint (TestEndpointWritesForget keeps this list whole).

func (q writeQuerier) CreateWebhookEndpoint(ctx context.Context, arg queries.CreateWebhookEndpointParams) (queries.WebhookEndpoint, error) {
	clear(q.endpointless)
	return q.querier.CreateWebhookEndpoint(ctx, arg)
}

func (q writeQuerier) AddWebhookSubscription(ctx context.Context, arg queries.AddWebhookSubscriptionParams) error {
	clear(q.endpointless)
	return q.querier.AddWebhookSubscription(ctx, arg)
}

func (q writeQuerier) DeleteWebhookEndpoint(ctx context.Context, arg queries.DeleteWebhookEndpointParams) (int64, error) {
	clear(q.endpointless)
	return q.querier.DeleteWebhookEndpoint(ctx, arg)
}

func (q writeQuerier) EnableWebhookEndpoint(ctx context.Context, arg queries.EnableWebhookEndpointParams) (queries.WebhookEndpoint, error) {
	clear(q.endpointless)
	return q.querier.EnableWebhookEndpoint(ctx, arg)
}

func (q writeQuerier) RotateWebhookSecret(ctx context.Context, arg queries.RotateWebhookSecretParams) (queries.WebhookEndpoint, error) {
	clear(q.endpointless)
	return q.querier.RotateWebhookSecret(ctx, arg)
}

func (q writeQuerier) DisableWebhookEndpoint(ctx context.Context, arg queries.DisableWebhookEndpointParams) error {
	clear(q.endpointless)
	return q.querier.DisableWebhookEndpoint(ctx, arg)
}

func (q writeQuerier) MarkEndpointFailing(ctx context.Context, arg queries.MarkEndpointFailingParams) (string, error) {
	clear(q.endpointless)
	return q.querier.MarkEndpointFailing(ctx, arg)
}

func (q writeQuerier) MarkEndpointSucceeding(ctx context.Context, id string) error {
	clear(q.endpointless)
	return q.querier.MarkEndpointSucceeding(ctx, id)
}

func (q writeQuerier) SetWebhookSecret(ctx context.Context, arg queries.SetWebhookSecretParams) error {
	clear(q.endpointless)
	return q.querier.SetWebhookSecret(ctx, arg)
}

func (q writeQuerier) SetWebhookPreviousSecret(ctx context.Context, arg queries.SetWebhookPreviousSecretParams) error {
	clear(q.endpointless)
	return q.querier.SetWebhookPreviousSecret(ctx, arg)
}

// CountNewUser raises the platform's count as the shared query does, and forgets what
// the batch knew of it.
func (q writeQuerier) CountNewUser(ctx context.Context, id string) (int64, error) {
	delete(q.counts, id)
	return q.querier.CountNewUser(ctx, id)
}

// CreateUserRows is querier.CreateUserRows in two statements fewer to read: the count
// raised is the user's pw_id, and the user as stored is the row given, numbered and
// without verification, its row_id the insert's.
func (q writeQuerier) CreateUserRows(ctx context.Context, u store.NewUserRows) (queries.User, error) {
	pwID, err := q.raiseCount(ctx, u.User.PlatformID)
	if err != nil {
		return queries.User{}, err
	}
	p := u.User
	res, err := q.insertUser.ExecContext(ctx, p.ID, p.PlatformID, pwID, p.Name, p.Email, p.EmailKey, p.PhoneCountryCode, p.Phone, p.CreatedAt)
	if err != nil {
		return queries.User{}, err
	}
	rowID, err := res.LastInsertId()
	if err != nil {
		return queries.User{}, err
	}
	row := queries.User{
		RowID: rowID, ID: p.ID, PlatformID: p.PlatformID, PwID: pwID, Name: p.Name, Email: p.Email,
		EmailKey: p.EmailKey, PhoneCountryCode: p.PhoneCountryCode, Phone: p.Phone, CreatedAt: p.CreatedAt,
	}
	ownValues(&row)
	return row, createUserOwnRows(ctx, q.Queries, row, u)
}

// raiseCount raises the platform's user count and returns it: sql.ErrNoRows, having
// written nothing, when there is no such platform.
func (q writeQuerier) raiseCount(ctx context.Context, platformID string) (int64, error) {
	if n, ok := q.counts[platformID]; ok {
		delete(q.counts, platformID) // known again once raised
		res, err := q.raiseKnownCount.ExecContext(ctx, platformID)
		if err != nil {
			return 0, err
		}
		if raised, err := res.RowsAffected(); err != nil || raised != 1 {
			return 0, fmt.Errorf("payments: the user count of platform %s raised %d times (%v)", platformID, raised, err)
		}
		q.counts[platformID] = n + 1
		return n + 1, nil
	}
	var n int64
	if err := q.raiseUserCount.QueryRowContext(ctx, platformID).Scan(&n); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, sql.ErrNoRows // no such platform: nothing written
		}
		return 0, err
	}
	q.counts[platformID] = n
	return n, nil
}

// ownValues points the row's optional values at copies of their own, as a row read back
// has them: the row shares no memory with what its caller was given.
func ownValues(row *queries.User) {
	own := new([4]string) // the copies in one allocation, not one each
	for i, p := range []**string{&row.Email, &row.EmailKey, &row.PhoneCountryCode, &row.Phone} {
		if *p != nil {
			own[i] = **p
			*p = &own[i]
		}
	}
}

func (q writeQuerier) UpdateWebhookEndpoint(ctx context.Context, arg queries.UpdateWebhookEndpointParams) (queries.WebhookEndpoint, error) {
	clear(q.endpointless)
	return q.querier.UpdateWebhookEndpoint(ctx, arg)
}

func (q writeQuerier) ClearWebhookSubscriptions(ctx context.Context, endpointID string) error {
	clear(q.endpointless)
	return q.querier.ClearWebhookSubscriptions(ctx, endpointID)
}

func (q writeQuerier) PauseWebhookEndpoint(ctx context.Context, arg queries.PauseWebhookEndpointParams) (queries.WebhookEndpoint, error) {
	clear(q.endpointless)
	return q.querier.PauseWebhookEndpoint(ctx, arg)
}

func (q writeQuerier) DisableFailingEndpoint(ctx context.Context, arg queries.DisableFailingEndpointParams) (int64, error) {
	clear(q.endpointless)
	return q.querier.DisableFailingEndpoint(ctx, arg)
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// The committer's own statements for Create User, the write a platform makes most: the
// queries shared with PostgreSQL raise the platform's count (CountNewUser), then insert
// the user numbered by reading that count back and return the whole row as stored
// (CreateUser ... RETURNING *). On the committer's connection, the count comes back from
// the UPDATE itself and the user's row is the one given, so the insert neither reads the
// platform again nor decodes a row: the rows written are the same.
const (
	raiseUserCount = `UPDATE platforms SET user_count = user_count + 1 WHERE id = ? RETURNING user_count`
	insertUser     = `INSERT INTO users (id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// writeQuerier is the committer's querier: the statements prepared on its connection,
// and its own for CreateUserRows.
type writeQuerier struct {
	querier
	raiseUserCount, insertUser *sql.Stmt
}

// CreateUserRows is querier.CreateUserRows in two statements fewer to read: the count
// raised is the user's pw_id, and the user as stored is the row given, numbered and
// without verification, its row_id the insert's.
func (q writeQuerier) CreateUserRows(ctx context.Context, u store.NewUserRows) (queries.User, error) {
	var pwID int64
	if err := q.raiseUserCount.QueryRowContext(ctx, u.User.PlatformID).Scan(&pwID); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return queries.User{}, sql.ErrNoRows // no such platform: nothing written
		}
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

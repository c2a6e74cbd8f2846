package payments_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Delete Payee Bank: soft deletes, and who may delete what.

func TestDeletePayeeBank(t *testing.T) {
	ctx := context.Background()
	now, setNow := fixedClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	w := newCBWorld(t, payments.Options{Now: now})
	db := rawDB(t, w.path)
	add := func(t *testing.T, userID, payeeID string) string {
		t.Helper()
		b, err := w.svc.AddPayeeBank(ctx, w.platformID, userID, cbBank(payeeID, "NG", "0123456789", ""))
		if err != nil {
			t.Fatal(err)
		}
		return b.BankID.String()
	}

	t.Run("OK", func(t *testing.T) {
		id := add(t, w.userID, w.payeeID)
		keep := add(t, w.userID, w.payeeID)
		setNow(time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC))
		if err := w.svc.DeletePayeeBank(ctx, w.platformID, strings.ToUpper(w.userID), strings.ToUpper(id)); err != nil {
			t.Fatal(err)
		}
		// The row is kept, marked deleted.
		var deletedAt, updatedAt sql.NullString
		if err := db.QueryRow(`SELECT deleted_at, updated_at FROM payee_banks WHERE id = $1`, id).Scan(&deletedAt, &updatedAt); err != nil {
			t.Fatalf("the deleted row is gone: %v", err)
		}
		if !deletedAt.Valid || !strings.HasPrefix(deletedAt.String, "2026-03-05T00:00:00") {
			t.Errorf("deleted_at = %v", deletedAt)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM payee_banks WHERE id = $1 AND deleted_at IS NULL`, keep); n != 1 {
			t.Error("the other bank was deleted too")
		}

		// A second delete finds nothing.
		err := w.svc.DeletePayeeBank(ctx, w.platformID, w.userID, id)
		errorOf(t, err, payments.CodeNotFound)
		if err := w.svc.DeletePayeeBank(ctx, w.platformID, w.userID, keep); err != nil {
			t.Errorf("deleting the other bank: %v", err)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		mine := add(t, w.userID, w.payeeID)
		otherUser, otherPayee := w.other(t, "grace@example.com")
		others := add(t, otherUser, otherPayee)
		foreignPlatform, foreignUser, foreignPayee := w.foreign(t)
		foreignBank, err := w.svc.AddPayeeBank(ctx, foreignPlatform, foreignUser, cbBank(foreignPayee, "NG", "0123456789", ""))
		if err != nil {
			t.Fatal(err)
		}
		foreign := foreignBank.BankID.String()
		tests := []struct {
			name       string
			platformID uuid.UUID
			userID     string
			bankID     string
		}{
			{"Unknown", w.platformID, w.userID, uuid.NewString()},
			{"OtherUsersBank", w.platformID, w.userID, others},
			{"OtherUserPathOwnBank", w.platformID, otherUser, mine},
			{"ForeignBank", w.platformID, w.userID, foreign},
			{"ForeignUserPath", w.platformID, foreignUser, foreign},
			{"ForeignPlatformCalling", foreignPlatform, w.userID, mine},
			{"UnknownUser", w.platformID, uuid.NewString(), mine},
			{"PayeeIDIsNotABank", w.platformID, w.userID, w.payeeID},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				err := w.svc.DeletePayeeBank(ctx, tc.platformID, tc.userID, tc.bankID)
				errorOf(t, err, payments.CodeNotFound)
			})
		}
		if n := queryInt(t, db, `SELECT count(*) FROM payee_banks WHERE id IN ($1, $2, $3) AND deleted_at IS NULL`, mine, others, foreign); n != 3 {
			t.Errorf("%d of 3 banks left, want all: a refused delete deleted", n)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		err := w.svc.DeletePayeeBank(ctx, w.platformID, "nope", "")
		assertFields(t, err, fieldErrors{
			uuidParsing("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1", "nope", "path", "user_id"),
			uuidParsing("invalid length: expected length 32 for simple format, found 0", "", "path", "bank_uuid"),
		})
	})
}

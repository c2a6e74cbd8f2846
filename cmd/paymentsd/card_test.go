package main

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // to count the stored cards

	"github.com/platform-payments/payments"
)

// paymentsd card add: cards come into being through the command line (and the library)
// only; what it prints is the card record, never a full number or a security code.

// printedCard is every field card add may print; decodeLine refuses any other.
type printedCard struct {
	CardID    uuid.UUID `json:"card_id"`
	UserID    uuid.UUID `json:"user_id"`
	Brand     string    `json:"brand"`
	Last4     string    `json:"last4"`
	ExpMonth  int       `json:"exp_month"`
	ExpYear   int       `json:"exp_year"`
	CreatedAt time.Time `json:"created_at"`
}

func TestCardAdd(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	svc := openDB(t, db, "")
	creds, user := newUser(t, svc)

	// deletable reports whether the card is stored for the user: the platform can delete
	// it through the library (as Delete Card does).
	deletable := func(t *testing.T, cardID uuid.UUID) {
		t.Helper()
		got, err := svc.DeleteCard(ctx, creds.PlatformID, user.UserID.String(), payments.CardDeletion{CardID: cardID.String()})
		if err != nil || !got.Deleted {
			t.Errorf("delete the printed card: %+v, %v", got, err)
		}
	}

	t.Run("OK", func(t *testing.T) {
		r := runT(t, "", "card", "add", "-db", db, "-user", user.UserID.String(),
			"-brand", "mastercard", "-last4", "4444", "-exp", "07/2031")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
		}
		var c printedCard
		decodeLine(t, r.stdout, &c)
		if c.CardID == uuid.Nil || c.UserID != user.UserID || c.Brand != "mastercard" || c.Last4 != "4444" ||
			c.ExpMonth != 7 || c.ExpYear != 2031 || c.CreatedAt.IsZero() {
			t.Errorf("card %+v", c)
		}
		if !strings.Contains(r.stdout, `"last4":"4444"`) || strings.Contains(r.stdout, "number") {
			t.Errorf("stdout %q", r.stdout)
		}
		deletable(t, c.CardID)
	})
	t.Run("OKDefaults", func(t *testing.T) {
		r := runT(t, "", "card", "add", "-db", db, "-user", strings.ToUpper(user.UserID.String()))
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
		}
		var c printedCard
		decodeLine(t, r.stdout, &c)
		if c.UserID != user.UserID || c.Brand != "visa" || c.Last4 != "4242" || c.ExpMonth != 12 || c.ExpYear != 2030 {
			t.Errorf("card %+v, want visa 4242 12/2030 of %s", c, user.UserID)
		}
		deletable(t, c.CardID)
	})

	// Bad flags: a one-line error naming the flag, exit status 2, nothing printed or stored.
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"ErrExpNoSlash", []string{"-user", user.UserID.String(), "-exp", "12-2030"}, `-exp: "12-2030" is not MM/YYYY`},
		{"ErrExpTwoDigitYear", []string{"-user", user.UserID.String(), "-exp", "12/30"}, `-exp: "12/30" is not MM/YYYY`},
		{"ErrExpLetters", []string{"-user", user.UserID.String(), "-exp", "Dec/2030"}, `-exp: "Dec/2030" is not MM/YYYY`},
		{"ErrExpEmpty", []string{"-user", user.UserID.String(), "-exp", ""}, `-exp: "" is not MM/YYYY`},
		{"ErrUserMissing", nil, "paymentsd card add: -user is required"},
		{"ErrUserMalformed", []string{"-user", "ada"}, `"ada" is not a user id`},
		{"ErrExtraArgument", []string{"-user", user.UserID.String(), "4242424242424242"}, `unexpected argument "4242424242424242"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runT(t, "", append([]string{"card", "add", "-db", db}, tc.args...)...)
			if r.code != 2 || r.stdout != "" {
				t.Errorf("exit status %d, stdout %q; want 2 and nothing", r.code, r.stdout)
			}
			wantOneLine(t, "stderr", r.stderr, tc.want)
			wantOneLine(t, "stderr", r.stderr, "(see 'paymentsd card add -h')")
		})
	}

	// Failed operations: exit status 1 with the library's message, naming the field.
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"ErrUnknownUser", []string{"-user", uuid.NewString()}, "paymentsd card add: User not found."},
		{"ErrBrand", []string{"-user", user.UserID.String(), "-brand", "maestro"},
			"body.brand: Input should be 'visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb' or 'unionpay'"},
		{"ErrLast4", []string{"-user", user.UserID.String(), "-last4", "42"},
			"body.last4: String should match pattern '^[0-9]{4}$'"},
		{"ErrLast4FullNumber", []string{"-user", user.UserID.String(), "-last4", "4242424242424242"},
			"body.last4: String should have at most 4 characters"},
		{"ErrExpMonth", []string{"-user", user.UserID.String(), "-exp", "13/2030"},
			"body.exp_month: Input should be less than or equal to 12"},
		{"ErrExpYear", []string{"-user", user.UserID.String(), "-exp", "01/1999"},
			"body.exp_year: Input should be greater than or equal to 2000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runT(t, "", append([]string{"card", "add", "-db", db}, tc.args...)...)
			if r.code != 1 || r.stdout != "" {
				t.Errorf("exit status %d, stdout %q; want 1 and nothing", r.code, r.stdout)
			}
			wantOneLine(t, "stderr", r.stderr, tc.want)
			if !strings.HasPrefix(r.stderr, "paymentsd card add: ") {
				t.Errorf("stderr = %q, want it to start with the command", r.stderr)
			}
		})
	}

	// The two cards printed were deleted above; no failed run left one behind.
	raw, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var live int
	if err := raw.QueryRow(`SELECT count(*) FROM cards WHERE deleted_at IS NULL`).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if live != 0 {
		t.Errorf("%d cards stored by failed runs", live)
	}
}

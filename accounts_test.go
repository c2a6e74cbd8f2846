package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Linked bank accounts: CONTRACT.md section 4 (required fields, formats) and section 5
// (defaults, masking, the default account, 403 before verification, 404 for foreign ids).

// accountTypes is how a literal_error for account_type lists the six allowed values.
const accountTypes = "'PERSONAL_SAVINGS', 'BUSINESS_SAVINGS', 'BUSINESS_CHECKING', 'PERSONAL_CHECKING', 'SERVICE_SAVINGS' or 'SERVICE_BUSINESS'"

// enumErr is the literal_error entry of a value outside an enumeration; expected lists
// the allowed values as pydantic writes them.
func enumErr(expected string, input any, l ...any) payments.FieldError {
	return payments.FieldError{Type: "literal_error", Loc: l, Msg: "Input should be " + expected, Input: input,
		Ctx: object{"expected": expected}}
}

func boolErr(input any, l ...any) payments.FieldError {
	return payments.FieldError{Type: "bool_type", Loc: l, Msg: "Input should be a valid boolean", Input: input}
}

// newAccount returns a valid Add Bank Account body for the user with the given account
// number.
func newAccount(userID uuid.UUID, accountNumber string) payments.NewBankAccount {
	return payments.NewBankAccount{
		UserID:        userID.String(),
		BankName:      "Chase",
		AccountNumber: accountNumber,
		RoutingNumber: "021000021",
		AccountType:   "PERSONAL_CHECKING",
	}
}

// mustAccount links a bank account to a user of the platform.
func mustAccount(tb testing.TB, svc *payments.Service, platformID uuid.UUID, in payments.NewBankAccount) payments.BankAccount {
	tb.Helper()
	a, err := svc.AddBankAccount(context.Background(), platformID, in)
	if err != nil {
		tb.Fatalf("add bank account %s: %v", in.AccountNumber, err)
	}
	return a
}

func TestAddBankAccount(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	now, _ := fixedClock(time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC))
	svc := mustOpenFile(t, path, payments.Options{Now: now})
	db := rawDB(t, path)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada Lovelace", "ada@example.com")

	t.Run("OK", func(t *testing.T) {
		in := payments.NewBankAccount{
			UserID:               u.UserID.String(),
			AccountHolderName:    ptr("A. Lovelace"),
			BankName:             "Chase",
			NickName:             ptr("Salary"),
			AccountNumber:        "000123456789",
			RoutingNumber:        "021000021",
			BankAddress:          ptr("270 Park Avenue"),
			City:                 ptr("New York"),
			State:                ptr("NY"),
			Zip:                  ptr("10017"),
			Country:              ptr("US"),
			AccountType:          "PERSONAL_SAVINGS",
			AccountHolderAddress: ptr("12 St James's Square"),
			AccountHolderCity:    ptr("London"),
			AccountHolderState:   ptr("London"),
			AccountHolderZip:     ptr("SW1Y 4LB"),
			AccountHolderCountry: ptr("GB"),
		}
		got, err := svc.AddBankAccount(ctx, p.PlatformID, in)
		if err != nil {
			t.Fatal(err)
		}
		want := object{
			"account_id":          got.AccountID.String(),
			"bank_nick_name":      "Salary",
			"account_number":      "6789",
			"account_balance":     0,
			"routing_number":      "021000021",
			"account_type":        "PERSONAL_SAVINGS",
			"bank_name":           "Chase",
			"account_holder_name": "A. Lovelace",
			"verification_status": "not_applied",
			"verification_type":   "MD",
			"is_verified":         false,
			"is_default":          true,
			"created_at":          "2026-05-01T09:30:00Z",
		}
		if g, w := canonicalJSON(t, got), canonicalJSON(t, want); g != w {
			t.Errorf("account:\n got %s\nwant %s", g, w)
		}
		if got.AccountID == uuid.Nil || !canonicalUUID.MatchString(got.AccountID.String()) {
			t.Errorf("account_id = %q, not a canonical UUID", got.AccountID)
		}
		// The full number is stored sealed (for ACH) and never returned.
		var sealed, holder, owner string
		var index []byte
		if err := db.QueryRow(`SELECT account_number_sealed, account_number_index, account_holder_name, user_id
			FROM bank_accounts WHERE id = $1`, got.AccountID.String()).Scan(&sealed, &index, &holder, &owner); err != nil {
			t.Fatal(err)
		}
		if holder != "A. Lovelace" || owner != u.UserID.String() {
			t.Errorf("stored %q, %q", holder, owner)
		}
		if !strings.HasPrefix(sealed, "v1:"+svc.DataKeys().SealingID()+":") || strings.Contains(sealed, "123456789") {
			t.Errorf("account number stored as %q, want it sealed under %s", sealed, svc.DataKeys().SealingID())
		}
		if number, err := svc.Unseal(sealed, payments.BankAccountNumberAAD(got.AccountID.String())); err != nil || number != "000123456789" {
			t.Errorf("sealed account number opens to %q, %v", number, err)
		}
		if want := svc.AccountIndex(u.UserID.String(), "021000021", "000123456789"); !bytes.Equal(index, want) || len(index) != 32 {
			t.Errorf("blind index %x, want %x", index, want)
		}
		if raw, _ := json.Marshal(got); strings.Contains(string(raw), "123456789") {
			t.Errorf("the response shows more than the last four digits: %s", raw)
		}
		var stateCity string
		if err := db.QueryRow(`SELECT city || '/' || account_holder_zip FROM bank_accounts WHERE id = $1`,
			got.AccountID.String()).Scan(&stateCity); err != nil || stateCity != "New York/SW1Y 4LB" {
			t.Errorf("optional fields stored as %q (%v)", stateCity, err)
		}
	})

	t.Run("OKHolderNameDefaultsToUsers", func(t *testing.T) {
		got := mustAccount(t, svc, p.PlatformID, newAccount(u.UserID, "4000"))
		if got.AccountHolderName != "Ada Lovelace" || got.AccountNumber != "4000" || got.BankNickName != nil {
			t.Errorf("account = %+v, want the user's name as holder, 4000, no nick name", got)
		}
	})

	t.Run("OKNullMeansAbsent", func(t *testing.T) {
		// Every optional field null, as a client of the FastAPI service sends them: stored
		// and answered as if left out (the holder is the user, is_default not given).
		raw := `{"user_id":"` + u.UserID.String() + `","bank_name":"Chase","account_number":"40020000",
			"routing_number":"021000021","account_type":"PERSONAL_CHECKING","account_holder_name":null,
			"nick_name":null,"bank_address":null,"city":null,"state":null,"zip":null,"country":null,
			"account_holder_address":null,"account_holder_city":null,"account_holder_state":null,
			"account_holder_zip":null,"account_holder_country":null,"is_default":null}`
		got, err := svc.AddBankAccount(ctx, p.PlatformID, decoded[payments.NewBankAccount](t, svc, "accounts_add", body(raw)))
		if err != nil {
			t.Fatal(err)
		}
		absent := mustAccount(t, svc, p.PlatformID, newAccount(u.UserID, "40030000"))
		gotID := got.AccountID.String()
		got.AccountID, got.AccountNumber = absent.AccountID, absent.AccountNumber
		if g, w := canonicalJSON(t, got), canonicalJSON(t, absent); g != w {
			t.Errorf("with nulls:\n got %s\nwant %s (the fields left out)", g, w)
		}
		if got.IsDefault || got.AccountHolderName != "Ada Lovelace" || got.BankNickName != nil {
			t.Errorf("account = %+v", got)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM bank_accounts WHERE id = $1 AND NOT is_default
			AND account_holder_name = 'Ada Lovelace' AND coalesce(nick_name, bank_address, city, state, zip, country,
			account_holder_address, account_holder_city, account_holder_state, account_holder_zip, account_holder_country) IS NULL`,
			gotID); n != 1 {
			t.Error("the optional fields sent as null are not stored as NULL")
		}
	})

	t.Run("OKUserIDOtherForm", func(t *testing.T) {
		in := newAccount(u.UserID, "4001")
		in.UserID = strings.ToUpper(in.UserID)
		mustAccount(t, svc, p.PlatformID, in)
	})

	// Each field of the spec's table at its maximum length is accepted, one more character
	// is refused. Lengths count characters: "é" is one.
	n := 0
	nextNumber := func() string { n++; return fmt.Sprintf("%08d", 10000000+n) }
	for _, f := range []struct {
		name  string
		max   int
		set   func(in *payments.NewBankAccount, s string)
		valid func(n int) string // a valid value of n characters
	}{
		{"account_holder_name", 100, func(in *payments.NewBankAccount, s string) { in.AccountHolderName = &s }, nil},
		{"bank_name", 100, func(in *payments.NewBankAccount, s string) { in.BankName = s }, nil},
		{"nick_name", 100, func(in *payments.NewBankAccount, s string) { in.NickName = &s }, nil},
		{"account_number", 20, func(in *payments.NewBankAccount, s string) { in.AccountNumber = s },
			func(n int) string { return strings.Repeat("7", n) }},
		{"routing_number", 9, func(in *payments.NewBankAccount, s string) { in.RoutingNumber = s },
			func(n int) string { return "011000015"[:min(n, 9)] + strings.Repeat("0", max(0, n-9)) }},
		{"bank_address", 300, func(in *payments.NewBankAccount, s string) { in.BankAddress = &s }, nil},
		{"city", 50, func(in *payments.NewBankAccount, s string) { in.City = &s }, nil},
		{"state", 50, func(in *payments.NewBankAccount, s string) { in.State = &s }, nil},
		{"zip", 10, func(in *payments.NewBankAccount, s string) { in.Zip = &s }, nil},
		{"country", 50, func(in *payments.NewBankAccount, s string) { in.Country = &s }, nil},
		{"account_holder_address", 500, func(in *payments.NewBankAccount, s string) { in.AccountHolderAddress = &s }, nil},
		{"account_holder_city", 50, func(in *payments.NewBankAccount, s string) { in.AccountHolderCity = &s }, nil},
		{"account_holder_state", 50, func(in *payments.NewBankAccount, s string) { in.AccountHolderState = &s }, nil},
		{"account_holder_zip", 50, func(in *payments.NewBankAccount, s string) { in.AccountHolderZip = &s }, nil},
		{"account_holder_country", 50, func(in *payments.NewBankAccount, s string) { in.AccountHolderCountry = &s }, nil},
	} {
		valid := f.valid
		if valid == nil {
			valid = func(n int) string { return strings.Repeat("é", n) }
		}
		t.Run("OKMaxLength/"+f.name, func(t *testing.T) {
			in := newAccount(u.UserID, nextNumber())
			f.set(&in, valid(f.max))
			if _, err := svc.AddBankAccount(ctx, p.PlatformID, in); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("ErrTooLong/"+f.name, func(t *testing.T) {
			in := newAccount(u.UserID, nextNumber())
			long := valid(f.max + 1)
			f.set(&in, long)
			_, err := svc.AddBankAccount(ctx, p.PlatformID, in)
			assertFields(t, err, fieldErrors{tooLong(f.max, long, "body", f.name)})
		})
		t.Run("ErrEmpty/"+f.name, func(t *testing.T) {
			in := newAccount(u.UserID, nextNumber())
			f.set(&in, "")
			_, err := svc.AddBankAccount(ctx, p.PlatformID, in)
			assertFields(t, err, fieldErrors{tooShort(1, "", "body", f.name)})
		})
	}

	// account_number: 4 to 20 digits. routing_number: 9 digits passing the ABA checksum.
	accountPattern, routingPattern := "^[0-9]{4,20}$", "^[0-9]{9}$"
	for _, tc := range []struct {
		name string
		set  func(in *payments.NewBankAccount)
		want fieldErrors // nil: accepted
	}{
		{"OKAccountNumber4Digits", func(in *payments.NewBankAccount) { in.AccountNumber = "0001" }, nil},
		{"ErrAccountNumber3Digits", func(in *payments.NewBankAccount) { in.AccountNumber = "123" },
			fieldErrors{patternMismatch(accountPattern, "123", "body", "account_number")}},
		{"ErrAccountNumberNotDigits", func(in *payments.NewBankAccount) { in.AccountNumber = "1234-5678" },
			fieldErrors{patternMismatch(accountPattern, "1234-5678", "body", "account_number")}},
		{"ErrAccountNumberSpaces", func(in *payments.NewBankAccount) { in.AccountNumber = " 12345678" },
			fieldErrors{patternMismatch(accountPattern, " 12345678", "body", "account_number")}},
		{"OKRouting021000021", func(in *payments.NewBankAccount) { in.RoutingNumber = "021000021" }, nil},
		{"OKRouting011000015", func(in *payments.NewBankAccount) { in.RoutingNumber = "011000015" }, nil},
		{"OKRouting026009593", func(in *payments.NewBankAccount) { in.RoutingNumber = "026009593" }, nil},
		{"ErrRoutingChecksum", func(in *payments.NewBankAccount) { in.RoutingNumber = "021000022" },
			fieldErrors{ruleValueErr("021000022", "body", "routing_number")}},
		{"ErrRoutingChecksumTransposed", func(in *payments.NewBankAccount) { in.RoutingNumber = "012000021" },
			fieldErrors{ruleValueErr("012000021", "body", "routing_number")}},
		{"ErrRouting8Digits", func(in *payments.NewBankAccount) { in.RoutingNumber = "02100002" },
			fieldErrors{patternMismatch(routingPattern, "02100002", "body", "routing_number")}},
		{"ErrRoutingNotDigits", func(in *payments.NewBankAccount) { in.RoutingNumber = "02100002X" },
			fieldErrors{patternMismatch(routingPattern, "02100002X", "body", "routing_number")}},
		{"ErrAccountType/CHECKING", func(in *payments.NewBankAccount) { in.AccountType = "CHECKING" },
			fieldErrors{enumErr(accountTypes, "CHECKING", "body", "account_type")}},
		{"ErrAccountType/SAVINGS", func(in *payments.NewBankAccount) { in.AccountType = "SAVINGS" },
			fieldErrors{enumErr(accountTypes, "SAVINGS", "body", "account_type")}},
		{"ErrAccountType/BUSINESS", func(in *payments.NewBankAccount) { in.AccountType = "BUSINESS" },
			fieldErrors{enumErr(accountTypes, "BUSINESS", "body", "account_type")}},
		{"ErrAccountType/LowerCase", func(in *payments.NewBankAccount) { in.AccountType = "personal_checking" },
			fieldErrors{enumErr(accountTypes, "personal_checking", "body", "account_type")}},
		{"ErrUserIDMalformed", func(in *payments.NewBankAccount) { in.UserID = "user-1" },
			fieldErrors{uuidParsing("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `u` at 1",
				"user-1", "body", "user_id")}},
		// Several at once: one entry per field, in the order of the spec's table.
		{"ErrSeveral", func(in *payments.NewBankAccount) {
			in.AccountType, in.RoutingNumber, in.AccountNumber = "CHECKING", "021000022", "12"
		}, fieldErrors{
			patternMismatch(accountPattern, "12", "body", "account_number"),
			ruleValueErr("021000022", "body", "routing_number"),
			enumErr(accountTypes, "CHECKING", "body", "account_type"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newAccount(u.UserID, nextNumber())
			tc.set(&in)
			_, err := svc.AddBankAccount(ctx, p.PlatformID, in)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			assertRuleFields(t, err, tc.want)
		})
	}
	for _, accountType := range []string{"PERSONAL_SAVINGS", "BUSINESS_SAVINGS", "BUSINESS_CHECKING", "PERSONAL_CHECKING", "SERVICE_SAVINGS", "SERVICE_BUSINESS"} {
		t.Run("OKAccountType/"+accountType, func(t *testing.T) {
			in := newAccount(u.UserID, nextNumber())
			in.AccountType = accountType
			if got := mustAccount(t, svc, p.PlatformID, in); got.AccountType != accountType {
				t.Errorf("account_type = %q", got.AccountType)
			}
		})
	}

	t.Run("ErrUserOfOtherPlatform", func(t *testing.T) {
		other := mustPlatform(t, svc)
		eve := mustUser(t, svc, other.PlatformID, "Eve", "eve@example.com")
		before := queryInt(t, db, `SELECT count(*) FROM bank_accounts`)
		_, err := svc.AddBankAccount(ctx, p.PlatformID, newAccount(eve.UserID, "55550001"))
		foreign := errorOf(t, err, payments.CodeNotFound)
		_, err = svc.AddBankAccount(ctx, p.PlatformID, newAccount(uuid.New(), "55550002"))
		if unknown := errorOf(t, err, payments.CodeNotFound); unknown.Message != foreign.Message {
			t.Errorf("a foreign user answers %q, an unknown one %q: existence leaks", foreign.Message, unknown.Message)
		}
		if after := queryInt(t, db, `SELECT count(*) FROM bank_accounts`); after != before {
			t.Errorf("%d accounts stored, had %d", after, before)
		}
	})
}

// The body as a client sends it: missing required fields, unknown fields and types that
// the Go struct cannot express.
func TestDecode_AccountsAdd(t *testing.T) {
	id := uuid.NewString()
	valid := object{"user_id": id, "bank_name": "Chase", "account_number": "123456789", "routing_number": "021000021",
		"account_type": "PERSONAL_CHECKING"}
	with := func(kv ...any) object {
		o := object{}
		for k, v := range valid {
			o[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(o, kv[i].(string))
			} else {
				o[kv[i].(string)] = kv[i+1]
			}
		}
		return o
	}
	js := func(o object) payments.Request { raw, _ := json.Marshal(o); return body(string(raw)) }
	runDecodeCases(t, "accounts_add", []decodeCase{
		{"OK", js(valid), nil},
		{"OKEveryField", js(with("account_holder_name", "Ada", "nick_name", "Main", "bank_address", "1 Main St",
			"city", "NYC", "state", "NY", "zip", "10001", "country", "US", "account_holder_address", "2 Main St",
			"account_holder_city", "NYC", "account_holder_state", "NY", "account_holder_zip", "10001",
			"account_holder_country", "US", "is_default", true)), nil},
		{"ErrAllRequiredMissing", body(`{}`), fieldErrors{
			missing(object{}, "body", "user_id"),
			missing(object{}, "body", "bank_name"),
			missing(object{}, "body", "account_number"),
			missing(object{}, "body", "routing_number"),
			missing(object{}, "body", "account_type"),
		}},
		{"ErrUserIDMissing", js(with("user_id", nil)), fieldErrors{missing(with("user_id", nil), "body", "user_id")}},
		{"ErrBankNameMissing", js(with("bank_name", nil)), fieldErrors{missing(with("bank_name", nil), "body", "bank_name")}},
		{"ErrAccountNumberMissing", js(with("account_number", nil)), fieldErrors{missing(with("account_number", nil), "body", "account_number")}},
		{"ErrRoutingNumberMissing", js(with("routing_number", nil)), fieldErrors{missing(with("routing_number", nil), "body", "routing_number")}},
		{"ErrAccountTypeMissing", js(with("account_type", nil)), fieldErrors{missing(with("account_type", nil), "body", "account_type")}},
		{"ErrExtraField", js(with("balance", 100)), fieldErrors{extra(100, "body", "balance")}},
		// Null means absent on the optional fields; a required field still wants its type.
		{"OKEveryOptionalNull", body(`{"user_id":"` + id + `","bank_name":"Chase","account_number":"123456789",
			"routing_number":"021000021","account_type":"PERSONAL_CHECKING","account_holder_name":null,"nick_name":null,
			"bank_address":null,"city":null,"state":null,"zip":null,"country":null,"account_holder_address":null,
			"account_holder_city":null,"account_holder_state":null,"account_holder_zip":null,
			"account_holder_country":null,"is_default":null}`), nil},
		{"ErrEveryRequiredNull", body(`{"user_id":null,"bank_name":null,"account_number":null,"routing_number":null,
			"account_type":null,"is_default":null}`), fieldErrors{
			stringType(nil, "body", "user_id"),
			stringType(nil, "body", "bank_name"),
			stringType(nil, "body", "account_number"),
			stringType(nil, "body", "routing_number"),
			enumErr(accountTypes, nil, "body", "account_type"),
		}},
		{"ErrIsDefaultNotBoolean", js(with("is_default", []any{true})), fieldErrors{boolErr([]any{true}, "body", "is_default")}},
		{"ErrAccountNumberNotString", js(with("account_number", 123456789)), fieldErrors{stringType(123456789, "body", "account_number")}},
		{"ErrAccountTypeNotString", js(with("account_type", 1)), fieldErrors{enumErr(accountTypes, 1, "body", "account_type")}},
		{"ErrBodyMissing", payments.Request{}, fieldErrors{missing(nil, "body")}},
		{"ErrBodyNotObject", body(`[]`), fieldErrors{notAnObject([]any{})}},
	})
}

func TestGetBankAccount(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	a, b := mustPlatform(t, svc), mustPlatform(t, svc)
	ada := mustUser(t, svc, a.PlatformID, "Ada", "ada@example.com") // verified below
	eve := mustUser(t, svc, b.PlatformID, "Eve", "eve@example.com") // verified
	bob := mustUser(t, svc, b.PlatformID, "Bob", "bob@example.com") // never verified
	if err := svc.VerifyUser(ctx, eve.UserID.String()); err != nil {
		t.Fatal(err)
	}
	adas := mustAccount(t, svc, a.PlatformID, newAccount(ada.UserID, "9876543210"))
	eves := mustAccount(t, svc, b.PlatformID, newAccount(eve.UserID, "1111222233"))
	bobs := mustAccount(t, svc, b.PlatformID, newAccount(bob.UserID, "4444555566"))

	_, err := svc.GetBankAccount(ctx, a.PlatformID, uuid.NewString())
	unknown := errorOf(t, err, payments.CodeNotFound).Message

	t.Run("ErrNotVerified", func(t *testing.T) {
		_, err := svc.GetBankAccount(ctx, a.PlatformID, adas.AccountID.String())
		errorOf(t, err, payments.CodeForbidden)
	})
	// Another platform's account is 404 whether its user is verified or not: a 403
	// would tell that the account exists.
	for _, tc := range []struct {
		name     string
		platform uuid.UUID
		account  uuid.UUID
	}{
		{"ErrOtherPlatformsVerifiedUser", a.PlatformID, eves.AccountID},
		{"ErrOtherPlatformsUnverifiedUser", a.PlatformID, bobs.AccountID},
		{"ErrOurUnverifiedUserAskedByOther", b.PlatformID, adas.AccountID},
		{"ErrUnknown", a.PlatformID, uuid.New()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.GetBankAccount(ctx, tc.platform, tc.account.String())
			if e := errorOf(t, err, payments.CodeNotFound); e.Message != unknown {
				t.Errorf("message %q, want %q as for an unknown account", e.Message, unknown)
			}
		})
	}
	t.Run("ErrMalformed", func(t *testing.T) {
		_, err := svc.GetBankAccount(ctx, a.PlatformID, "acct-1")
		assertFields(t, err, fieldErrors{uuidParsing(
			"invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `t` at 4",
			"acct-1", "path", "account_id")})
	})

	if err := svc.VerifyUser(ctx, ada.UserID.String()); err != nil {
		t.Fatal(err)
	}
	t.Run("OKAfterVerification", func(t *testing.T) {
		got, err := svc.GetBankAccount(ctx, a.PlatformID, adas.AccountID.String())
		if err != nil {
			t.Fatal(err)
		}
		if canonicalJSON(t, got) != canonicalJSON(t, adas) {
			t.Errorf("got %s, want what Add Bank Account returned, %s", canonicalJSON(t, got), canonicalJSON(t, adas))
		}
		if got.AccountNumber != "3210" {
			t.Errorf("account_number = %q, want the last four digits", got.AccountNumber)
		}
	})
	t.Run("OKUpperCaseID", func(t *testing.T) {
		got, err := svc.GetBankAccount(ctx, a.PlatformID, strings.ToUpper(adas.AccountID.String()))
		if err != nil || got.AccountID != adas.AccountID {
			t.Errorf("got %+v, %v", got, err)
		}
	})
	t.Run("ErrStillForeignAfterVerification", func(t *testing.T) {
		_, err := svc.GetBankAccount(ctx, b.PlatformID, adas.AccountID.String())
		errorOf(t, err, payments.CodeNotFound)
	})
}

package payments_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Payee banks (CONTRACT.md section 4, issue 4), and the world the payee-address tests
// share (payee_addresses_test.go).

// cbWorld is a platform with one user who has one payee.
type cbWorld struct {
	svc        *payments.Service
	path       string
	platformID uuid.UUID
	userID     string
	payeeID    string
}

// newCBWorld opens a service on a new file and creates a platform, a user and a payee.
func newCBWorld(t *testing.T, opts ...payments.Options) *cbWorld {
	t.Helper()
	path := newDSN(t)
	return newCBWorldOn(t, mustOpenFile(t, path, opts...), path)
}

// newCBWorldOn creates a platform, a user and a payee on svc, whose file is path.
func newCBWorldOn(t *testing.T, svc *payments.Service, path string) *cbWorld {
	t.Helper()
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada Lovelace", "ada@example.com")
	return &cbWorld{svc: svc, path: path, platformID: p.PlatformID, userID: u.UserID.String(),
		payeeID: cbPayee(t, svc, p.PlatformID, u.UserID, "Ravi Kumar").String()}
}

// cbPayee creates a payee of the user, as the user-API does.
func cbPayee(t *testing.T, svc *payments.Service, platformID, userID uuid.UUID, name string) uuid.UUID {
	t.Helper()
	p, err := svc.CreatePayee(context.Background(), payments.Caller{UserID: userID, PlatformID: platformID}, payments.NewPayee{Name: name})
	if err != nil {
		t.Fatalf("create payee %s: %v", name, err)
	}
	return p.PayeeID
}

// other adds a second user (with a payee) to the world's platform.
func (w *cbWorld) other(t *testing.T, email string) (userID, payeeID string) {
	t.Helper()
	u := mustUser(t, w.svc, w.platformID, "Other", email)
	return u.UserID.String(), cbPayee(t, w.svc, w.platformID, u.UserID, "Other payee").String()
}

// foreign adds a second platform with a user and a payee to the world's store.
func (w *cbWorld) foreign(t *testing.T) (platformID uuid.UUID, userID, payeeID string) {
	t.Helper()
	p := mustPlatform(t, w.svc)
	u := mustUser(t, w.svc, p.PlatformID, "Foreigner", "foreigner@example.com")
	return p.PlatformID, u.UserID.String(), cbPayee(t, w.svc, p.PlatformID, u.UserID, "Foreign payee").String()
}

// cbBank is an Add Payee Bank body; identifierValue "" leaves it out.
func cbBank(payeeID, country, account, identifierValue string) payments.NewPayeeBank {
	b := payments.NewPayeeBank{PayeeID: payeeID, AccountNumber: account, Country: country, BankAccType: "savings"}
	if identifierValue != "" {
		b.IdentifierValue = ptr(identifierValue)
	}
	return b
}

// A valid account of each country: IBANs pass mod-97, the CLABE its check digit.
const (
	ifscOK    = "HDFC0001234"
	ibanPK    = "PK36SCBL0000001123456702"
	ibanPK2   = "PK47MEZN0000300123456789"
	ibanAE    = "AE070331234567890123456"
	ibanAE2   = "AE620260001015678901234"
	ibanGB    = "GB29NWBK60161331926819"
	ibanGB2   = "GB82WEST12345698765432"
	ibanDE    = "DE89370400440532013000" // 22 characters, valid, German
	clabeOK   = "032180000118359719"
	clabeOK2  = "002010077777777771"
	accountIN = "123456789012"
)

func TestAddPayeeBank(t *testing.T) {
	ctx := context.Background()
	now, _ := fixedClock(time.Date(2026, 3, 4, 5, 6, 7, 890123000, time.UTC))
	w := newCBWorld(t, payments.Options{Now: now})
	db := rawDB(t, w.path)

	ok := []struct {
		name                 string
		in                   payments.NewPayeeBank
		wantIDType, wantIDVa *string
		wantPayoutBankID     *string
	}{
		{name: "IN", in: payments.NewPayeeBank{AccountNumber: accountIN, Country: "IN", BankAccType: "savings", IdentifierValue: ptr(ifscOK), BankNickName: ptr("Ravi's SBI")},
			wantIDType: ptr("IFSC"), wantIDVa: ptr(ifscOK)},
		{name: "INWithIdentifierType", in: payments.NewPayeeBank{AccountNumber: "123456789012345678", Country: "IN", BankAccType: "current", IdentifierType: ptr("IFSC"), IdentifierValue: ptr("SBIN0A1B2C3")},
			wantIDType: ptr("IFSC"), wantIDVa: ptr("SBIN0A1B2C3")},
		{name: "PK", in: payments.NewPayeeBank{AccountNumber: ibanPK, Country: "PK", BankAccType: "current", PayoutBankID: ptr("SCBLPKKX")}, wantPayoutBankID: ptr("SCBLPKKX")},
		{name: "PKWithoutBankID", in: payments.NewPayeeBank{AccountNumber: ibanPK2, Country: "PK", BankAccType: "savings"}},
		{name: "AE", in: payments.NewPayeeBank{AccountNumber: ibanAE, Country: "AE", BankAccType: "savings", PayoutBankID: ptr("033")}, wantPayoutBankID: ptr("033")},
		{name: "AEWithoutBankID", in: payments.NewPayeeBank{AccountNumber: ibanAE2, Country: "AE", BankAccType: "no_needed"}},
		{name: "PH", in: payments.NewPayeeBank{AccountNumber: "1234567890123456", Country: "PH", BankAccType: "savings"}},
		{name: "MX", in: payments.NewPayeeBank{AccountNumber: clabeOK, Country: "MX", BankAccType: "no_needed"}},
		{name: "MX2", in: payments.NewPayeeBank{AccountNumber: clabeOK2, Country: "MX", BankAccType: "savings"}},
		{name: "GB", in: payments.NewPayeeBank{AccountNumber: ibanGB, Country: "GB", BankAccType: "current"}},
		{name: "GB2", in: payments.NewPayeeBank{AccountNumber: ibanGB2, Country: "GB", BankAccType: "savings", BankNickName: ptr("Westminster")}},
		{name: "NG", in: payments.NewPayeeBank{AccountNumber: "0123456789", Country: "NG", BankAccType: "savings"}},
		{name: "BD", in: payments.NewPayeeBank{AccountNumber: "12345678901234567", Country: "BD", BankAccType: "current"}},
		{name: "BDShort", in: payments.NewPayeeBank{AccountNumber: "1", Country: "BD", BankAccType: "current"}},
	}
	for _, tc := range ok {
		t.Run("OK/"+tc.name, func(t *testing.T) {
			in := tc.in
			in.PayeeID = strings.ToUpper(w.payeeID) // any accepted UUID form
			b, err := w.svc.AddPayeeBank(ctx, w.platformID, w.userID, in)
			if err != nil {
				t.Fatal(err)
			}
			if b.BankID == uuid.Nil || b.AccountNumber != in.AccountNumber || b.Country != in.Country || b.BankAccType != in.BankAccType {
				t.Errorf("bank = %+v, want the fields of %+v", b, in)
			}
			if canonicalJSON(t, b.BankNickName) != canonicalJSON(t, in.BankNickName) {
				t.Errorf("bank_nick_name = %v, want %v", b.BankNickName, in.BankNickName)
			}
			if canonicalJSON(t, b.BankIdentifierType) != canonicalJSON(t, tc.wantIDType) ||
				canonicalJSON(t, b.BankIdentifierValue) != canonicalJSON(t, tc.wantIDVa) {
				t.Errorf("bank identifier %v %v, want %v %v", b.BankIdentifierType, b.BankIdentifierValue, tc.wantIDType, tc.wantIDVa)
			}
			if !b.CreatedAt.Equal(now().Truncate(time.Microsecond)) || !b.UpdatedAt.Equal(b.CreatedAt) {
				t.Errorf("created_at %v updated_at %v, want %v", b.CreatedAt, b.UpdatedAt, now())
			}

			// The record has exactly the spec's members; nulls are written as null.
			raw, _ := json.Marshal(b)
			wantKeys(t, "payee bank", raw, "account_number", "bank_acc_type", "bank_id", "bank_identifier_type",
				"bank_identifier_value", "bank_nick_name", "country", "created_at", "updated_at")
			var m map[string]any
			json.Unmarshal(raw, &m)
			if m["created_at"] != "2026-03-04T05:06:07.890123Z" {
				t.Errorf("created_at = %v", m["created_at"])
			}

			// What was stored: the owner, the payee, and payout_bank_id (never shown).
			var userID, payeeID string
			var payoutBankID, deletedAt sql.NullString
			if err := db.QueryRow(`SELECT user_id, payee_id, payout_bank_id, deleted_at FROM payee_banks WHERE id = $1`, b.BankID.String()).
				Scan(&userID, &payeeID, &payoutBankID, &deletedAt); err != nil {
				t.Fatal(err)
			}
			if userID != w.userID || payeeID != w.payeeID || deletedAt.Valid {
				t.Errorf("stored user %s payee %s deleted %v", userID, payeeID, deletedAt)
			}
			if tc.wantPayoutBankID != nil && payoutBankID.String != *tc.wantPayoutBankID || tc.wantPayoutBankID == nil && payoutBankID.Valid {
				t.Errorf("stored payout_bank_id %v, want %v", payoutBankID, tc.wantPayoutBankID)
			}
		})
	}

	// Each rule's failure: entries exactly as the API writes them.
	body := func(country, account string, edit func(b *payments.NewPayeeBank)) payments.NewPayeeBank {
		b := payments.NewPayeeBank{PayeeID: w.payeeID, AccountNumber: account, Country: country, BankAccType: "savings"}
		if country == "IN" {
			b.IdentifierValue = ptr(ifscOK)
		}
		if edit != nil {
			edit(&b)
		}
		return b
	}
	// asInput is the body as the validator sees it: missing fields report it whole.
	asInput := func(b payments.NewPayeeBank) any {
		raw, _ := json.Marshal(b)
		var m map[string]any
		json.Unmarshal(raw, &m)
		return m
	}
	noIFSC := body("IN", accountIN, func(b *payments.NewPayeeBank) { b.IdentifierValue = nil })
	noIFSCTyped := body("IN", accountIN, func(b *payments.NewPayeeBank) { b.IdentifierValue, b.IdentifierType = nil, ptr("IFSC") })
	acct := func(l ...any) []any { return append([]any{"body"}, l...) }
	invalid := []struct {
		name string
		in   payments.NewPayeeBank
		want fieldErrors
	}{
		// India: the IFSC is required and checked; identifier_type, when given, is IFSC.
		{"INIFSCMissing", noIFSC, fieldErrors{missing(asInput(noIFSC), "body", "identifier_value")}},
		{"INIFSCMissingTypeGiven", noIFSCTyped, fieldErrors{missing(asInput(noIFSCTyped), "body", "identifier_value")}},
		{"INIFSCFifthNotZero", body("IN", accountIN, func(b *payments.NewPayeeBank) { b.IdentifierValue = ptr("HDFC1001234") }),
			fieldErrors{ruleValueError("identifier_value must be an IFSC code: four letters, a zero, then six letters or digits for IN", "HDFC1001234", acct("identifier_value")...)}},
		{"INIFSCLowerCase", body("IN", accountIN, func(b *payments.NewPayeeBank) { b.IdentifierValue = ptr("hdfc0001234") }),
			fieldErrors{ruleValueError("identifier_value must be an IFSC code: four letters, a zero, then six letters or digits for IN", "hdfc0001234", acct("identifier_value")...)}},
		{"INIFSCShort", body("IN", accountIN, func(b *payments.NewPayeeBank) { b.IdentifierValue = ptr("HDFC000123") }),
			fieldErrors{ruleValueError("identifier_value must be an IFSC code: four letters, a zero, then six letters or digits for IN", "HDFC000123", acct("identifier_value")...)}},
		{"INIFSCLong", body("IN", accountIN, func(b *payments.NewPayeeBank) { b.IdentifierValue = ptr("HDFC00012345") }),
			fieldErrors{ruleValueError("identifier_value must be at most 11 characters for IN", "HDFC00012345", acct("identifier_value")...)}},
		{"INIdentifierTypeSWIFT", body("IN", accountIN, func(b *payments.NewPayeeBank) { b.IdentifierType = ptr("SWIFT") }),
			fieldErrors{ruleValueError("identifier_type must be 'IFSC' for IN", "SWIFT", acct("identifier_type")...)}},
		{"INIdentifierTypeLowerCase", body("IN", accountIN, func(b *payments.NewPayeeBank) { b.IdentifierType = ptr("ifsc") }),
			fieldErrors{ruleValueError("identifier_type must be 'IFSC' for IN", "ifsc", acct("identifier_type")...)}},
		{"INAccountNotDigits", body("IN", "12345-678", nil),
			fieldErrors{ruleValueError("account_number must contain digits only for IN", "12345-678", acct("account_number")...)}},
		{"INAccountTooLong", body("IN", "1234567890123456789", nil),
			fieldErrors{ruleValueError("account_number must be at most 18 characters for IN", "1234567890123456789", acct("account_number")...)}},
		{"INPayoutBankID", body("IN", accountIN, func(b *payments.NewPayeeBank) { b.PayoutBankID = ptr("HDFC") }),
			fieldErrors{ruleValueError("payout_bank_id is not accepted for IN", "HDFC", acct("payout_bank_id")...)}},
		{"INSeveral", body("IN", "12AB", func(b *payments.NewPayeeBank) { b.IdentifierValue, b.IdentifierType = ptr("HDFC1001234"), ptr("BIC") }),
			fieldErrors{
				ruleValueError("account_number must contain digits only for IN", "12AB", acct("account_number")...),
				ruleValueError("identifier_type must be 'IFSC' for IN", "BIC", acct("identifier_type")...),
				ruleValueError("identifier_value must be an IFSC code: four letters, a zero, then six letters or digits for IN", "HDFC1001234", acct("identifier_value")...),
			}},

		// identifier_type and identifier_value are India's alone.
		{"PKIdentifierValue", body("PK", ibanPK, func(b *payments.NewPayeeBank) { b.IdentifierValue = ptr("SCBL0000001") }),
			fieldErrors{ruleValueError("identifier_value is not accepted for PK", "SCBL0000001", acct("identifier_value")...)}},
		{"AEIdentifierType", body("AE", ibanAE, func(b *payments.NewPayeeBank) { b.IdentifierType = ptr("IBAN") }),
			fieldErrors{ruleValueError("identifier_type is not accepted for AE", "IBAN", acct("identifier_type")...)}},
		{"GBBoth", body("GB", ibanGB, func(b *payments.NewPayeeBank) { b.IdentifierType, b.IdentifierValue = ptr("IFSC"), ptr(ifscOK) }),
			fieldErrors{
				ruleValueError("identifier_type is not accepted for GB", "IFSC", acct("identifier_type")...),
				ruleValueError("identifier_value is not accepted for GB", ifscOK, acct("identifier_value")...),
			}},
		{"MXIdentifierValue", body("MX", clabeOK, func(b *payments.NewPayeeBank) { b.IdentifierValue = ptr(ifscOK) }),
			fieldErrors{ruleValueError("identifier_value is not accepted for MX", ifscOK, acct("identifier_value")...)}},
		{"PHIdentifierValue", body("PH", "1234", func(b *payments.NewPayeeBank) { b.IdentifierValue = ptr("010010012") }),
			fieldErrors{ruleValueError("identifier_value is not accepted for PH", "010010012", acct("identifier_value")...)}},
		{"NGIdentifierType", body("NG", "0123456789", func(b *payments.NewPayeeBank) { b.IdentifierType = ptr("CBN") }),
			fieldErrors{ruleValueError("identifier_type is not accepted for NG", "CBN", acct("identifier_type")...)}},
		{"BDIdentifierValue", body("BD", "1234", func(b *payments.NewPayeeBank) { b.IdentifierValue = ptr("090261726") }),
			fieldErrors{ruleValueError("identifier_value is not accepted for BD", "090261726", acct("identifier_value")...)}},

		// IBAN countries: prefix, length, check digits, characters.
		{"PKIBANWrongPrefix", body("PK", ibanGB, nil),
			fieldErrors{ruleValueError("account_number must be an IBAN starting with PK for PK", ibanGB, acct("account_number")...)}},
		{"PKIBANShort", body("PK", "PK67SCBL00000011234567", nil), // 22 characters, passes mod-97
			fieldErrors{ruleValueError("account_number must be an IBAN of 24 characters for PK", "PK67SCBL00000011234567", acct("account_number")...)}},
		{"PKIBANLong", body("PK", ibanPK+"0", nil),
			fieldErrors{ruleValueError("account_number must be at most 24 characters for PK", ibanPK+"0", acct("account_number")...)}},
		{"PKIBANCheckDigits", body("PK", "PK36SCBL0000001123456703", nil),
			fieldErrors{ruleValueError("account_number has wrong IBAN check digits for PK", "PK36SCBL0000001123456703", acct("account_number")...)}},
		{"PKIBANSwappedCheck", body("PK", "PK63SCBL0000001123456702", nil),
			fieldErrors{ruleValueError("account_number has wrong IBAN check digits for PK", "PK63SCBL0000001123456702", acct("account_number")...)}},
		{"PKIBANLowerCase", body("PK", "PK36scbl0000001123456702", nil),
			fieldErrors{ruleValueError("account_number must be an IBAN of upper-case letters and digits for PK", "PK36scbl0000001123456702", acct("account_number")...)}},
		{"PKIBANSpaces", body("PK", "PK36 SCBL 0000 0011 2345", nil),
			fieldErrors{ruleValueError("account_number must be an IBAN of upper-case letters and digits for PK", "PK36 SCBL 0000 0011 2345", acct("account_number")...)}},
		{"PKLocalNumber", body("PK", "00000011234567", nil),
			fieldErrors{ruleValueError("account_number must be an IBAN starting with PK for PK", "00000011234567", acct("account_number")...)}},
		{"AEIBANWrongPrefix", body("AE", ibanGB, nil),
			fieldErrors{ruleValueError("account_number must be an IBAN starting with AE for AE", ibanGB, acct("account_number")...)}},
		{"AEIBANShort", body("AE", ibanAE[:22], nil),
			fieldErrors{ruleValueError("account_number must be an IBAN of 23 characters for AE", ibanAE[:22], acct("account_number")...)}},
		{"AEIBANLong", body("AE", ibanPK, nil),
			fieldErrors{ruleValueError("account_number must be at most 23 characters for AE", ibanPK, acct("account_number")...)}},
		{"AEIBANCheckDigits", body("AE", "AE070331234567890123457", nil),
			fieldErrors{ruleValueError("account_number has wrong IBAN check digits for AE", "AE070331234567890123457", acct("account_number")...)}},
		{"GBIBANWrongPrefix", body("GB", ibanDE, nil),
			fieldErrors{ruleValueError("account_number must be an IBAN starting with GB for GB", ibanDE, acct("account_number")...)}},
		{"GBIBANShort", body("GB", ibanGB[:21], nil),
			fieldErrors{ruleValueError("account_number must be an IBAN of 22 characters for GB", ibanGB[:21], acct("account_number")...)}},
		{"GBIBANLong", body("GB", ibanAE, nil),
			fieldErrors{ruleValueError("account_number must be at most 22 characters for GB", ibanAE, acct("account_number")...)}},
		{"GBIBANCheckDigits", body("GB", "GB29NWBK60161331926818", nil),
			fieldErrors{ruleValueError("account_number has wrong IBAN check digits for GB", "GB29NWBK60161331926818", acct("account_number")...)}},

		// payout_bank_id: Pakistan's and the UAE's only; within the rule's 40 characters.
		{"GBPayoutBankID", body("GB", ibanGB, func(b *payments.NewPayeeBank) { b.PayoutBankID = ptr("NWBK") }),
			fieldErrors{ruleValueError("payout_bank_id is not accepted for GB", "NWBK", acct("payout_bank_id")...)}},
		{"MXPayoutBankID", body("MX", clabeOK, func(b *payments.NewPayeeBank) { b.PayoutBankID = ptr("032") }),
			fieldErrors{ruleValueError("payout_bank_id is not accepted for MX", "032", acct("payout_bank_id")...)}},
		{"PHPayoutBankID", body("PH", "1234", func(b *payments.NewPayeeBank) { b.PayoutBankID = ptr("BDO") }),
			fieldErrors{ruleValueError("payout_bank_id is not accepted for PH", "BDO", acct("payout_bank_id")...)}},
		{"NGPayoutBankID", body("NG", "0123456789", func(b *payments.NewPayeeBank) { b.PayoutBankID = ptr("058") }),
			fieldErrors{ruleValueError("payout_bank_id is not accepted for NG", "058", acct("payout_bank_id")...)}},
		{"BDPayoutBankID", body("BD", "1234", func(b *payments.NewPayeeBank) { b.PayoutBankID = ptr("090") }),
			fieldErrors{ruleValueError("payout_bank_id is not accepted for BD", "090", acct("payout_bank_id")...)}},
		{"PKPayoutBankIDTooLong", body("PK", ibanPK, func(b *payments.NewPayeeBank) { b.PayoutBankID = ptr(strings.Repeat("B", 41)) }),
			fieldErrors{tooLong(40, strings.Repeat("B", 41), acct("payout_bank_id")...)}},

		// Mexico: an 18-digit CLABE with its check digit.
		{"MXCLABECheckDigit", body("MX", "032180000118359718", nil),
			fieldErrors{ruleValueError("account_number has a wrong CLABE check digit for MX", "032180000118359718", acct("account_number")...)}},
		{"MXCLABEShort", body("MX", clabeOK[:17], nil),
			fieldErrors{ruleValueError("account_number must be a CLABE of exactly 18 digits for MX", clabeOK[:17], acct("account_number")...)}},
		{"MXCLABELong", body("MX", clabeOK+"0", nil),
			fieldErrors{ruleValueError("account_number must be at most 18 characters for MX", clabeOK+"0", acct("account_number")...)}},
		{"MXCLABELetter", body("MX", "03218000011835971A", nil),
			fieldErrors{ruleValueError("account_number must be a CLABE of exactly 18 digits for MX", "03218000011835971A", acct("account_number")...)}},

		// Local account numbers: digits within the rule's length.
		{"PHNotDigits", body("PH", "1234-5678", nil),
			fieldErrors{ruleValueError("account_number must contain digits only for PH", "1234-5678", acct("account_number")...)}},
		{"PHTooLong", body("PH", "12345678901234567", nil),
			fieldErrors{ruleValueError("account_number must be at most 16 characters for PH", "12345678901234567", acct("account_number")...)}},
		{"NGNotDigits", body("NG", "01234567a9", nil),
			fieldErrors{ruleValueError("account_number must contain digits only for NG", "01234567a9", acct("account_number")...)}},
		{"NGTooLong", body("NG", "01234567890", nil),
			fieldErrors{ruleValueError("account_number must be at most 10 characters for NG", "01234567890", acct("account_number")...)}},
		{"BDNotDigits", body("BD", "１２３４", nil), // full-width digits are not digits
			fieldErrors{ruleValueError("account_number must contain digits only for BD", "１２３４", acct("account_number")...)}},
		{"BDTooLong", body("BD", "123456789012345678", nil),
			fieldErrors{ruleValueError("account_number must be at most 17 characters for BD", "123456789012345678", acct("account_number")...)}},

		// The destination must have rules; the country code must be one.
		{"CountryWithoutRules", body("US", "123456789", nil),
			fieldErrors{ruleValueError("there are no payee rules for US", "US", acct("country")...)}},
		{"CountryUnknown", body("XX", "123456789", nil),
			fieldErrors{ruleValueError("'XX' is not an ISO 3166-1 alpha-2 country code", "XX", acct("country")...)}},
		{"CountryLowerCase", body("in", accountIN, nil),
			fieldErrors{patternMismatch("^[A-Z]{2}$", "in", acct("country")...)}},
		{"CountryName", body("India", accountIN, nil),
			fieldErrors{patternMismatch("^[A-Z]{2}$", "India", acct("country")...)}},

		// The request's own schema runs first.
		{"BankAccTypeChecking", body("GB", ibanGB, func(b *payments.NewPayeeBank) { b.BankAccType = "checking" }),
			fieldErrors{{Type: "literal_error", Loc: acct("bank_acc_type"), Msg: "Input should be 'savings', 'current' or 'no_needed'",
				Input: "checking", Ctx: object{"expected": "'savings', 'current' or 'no_needed'"}}}},
		{"PayeeIDMalformed", body("GB", ibanGB, func(b *payments.NewPayeeBank) { b.PayeeID = "payee-1" }),
			fieldErrors{uuidParsing("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `p` at 1", "payee-1", acct("payee_id")...)}},
		{"NickNameEmpty", body("GB", ibanGB, func(b *payments.NewPayeeBank) { b.BankNickName = ptr("") }),
			fieldErrors{tooShort(1, "", acct("bank_nick_name")...)}},
		{"AccountEmpty", body("GB", "", nil), fieldErrors{tooShort(1, "", acct("account_number")...)}},
		{"AccountOver64", body("GB", strings.Repeat("1", 65), nil), fieldErrors{tooLong(64, strings.Repeat("1", 65), acct("account_number")...)}},
	}
	countBanks := func() int64 { return queryInt(t, db, `SELECT count(*) FROM payee_banks`) }
	stored := countBanks()
	for _, tc := range invalid {
		t.Run("ErrInvalid/"+tc.name, func(t *testing.T) {
			_, err := w.svc.AddPayeeBank(ctx, w.platformID, w.userID, tc.in)
			assertFields(t, err, tc.want)
		})
	}
	if n := countBanks(); n != stored {
		t.Errorf("%d banks stored by refused requests", n-stored)
	}

	t.Run("ErrInvalidPath", func(t *testing.T) {
		_, err := w.svc.AddPayeeBank(ctx, w.platformID, "42", body("GB", ibanGB, nil))
		assertFields(t, err, fieldErrors{uuidParsing("invalid length: expected length 32 for simple format, found 2", "42", "path", "user_id")})
	})

	t.Run("ErrInvalidPathAndBodySchema", func(t *testing.T) {
		// Path and body entries come together, path first.
		_, err := w.svc.AddPayeeBank(ctx, w.platformID, "42", body("GB", "", nil))
		assertFields(t, err, fieldErrors{
			uuidParsing("invalid length: expected length 32 for simple format, found 2", "42", "path", "user_id"),
			tooShort(1, "", "body", "account_number"),
		})
	})

	t.Run("ErrInvalidPathBeforeCountryRule", func(t *testing.T) {
		// The destination country's rules, like every rule beyond JSON Schema, run once
		// the request meets its schema (docs/decisions/requests-and-validation.md): a malformed path is reported
		// alone, and the country-rule failure once the path is right.
		_, err := w.svc.AddPayeeBank(ctx, w.platformID, "42", noIFSC)
		assertFields(t, err, fieldErrors{
			uuidParsing("invalid length: expected length 32 for simple format, found 2", "42", "path", "user_id"),
		})
		_, err = w.svc.AddPayeeBank(ctx, w.platformID, w.userID, noIFSC)
		assertFields(t, err, fieldErrors{
			missing(asInput(noIFSC), "body", "identifier_value"),
		})
	})

	// Another platform's user, another user's payee, a payee of another platform: 404,
	// as for ids that do not exist.
	foreignPlatform, foreignUser, foreignPayee := w.foreign(t)
	otherUser, otherPayee := w.other(t, "grace@example.com")
	notFound := []struct {
		name       string
		platformID uuid.UUID
		userID     string
		payeeID    string
	}{
		{"ForeignUser", w.platformID, foreignUser, foreignPayee},
		{"ForeignUserOwnPayee", w.platformID, foreignUser, w.payeeID},
		{"ForeignPayee", w.platformID, w.userID, foreignPayee},
		{"OtherUsersPayee", w.platformID, w.userID, otherPayee},
		{"UserOfOtherPlatformCalling", foreignPlatform, w.userID, w.payeeID},
		{"UnknownUser", w.platformID, uuid.NewString(), w.payeeID},
		{"UnknownPayee", w.platformID, w.userID, uuid.NewString()},
		{"UnknownPlatform", uuid.New(), w.userID, w.payeeID},
		{"PayeeIsAUser", w.platformID, w.userID, otherUser},
	}
	for _, tc := range notFound {
		t.Run("ErrNotFound/"+tc.name, func(t *testing.T) {
			_, err := w.svc.AddPayeeBank(ctx, tc.platformID, tc.userID, body("GB", ibanGB, func(b *payments.NewPayeeBank) { b.PayeeID = tc.payeeID }))
			errorOf(t, err, payments.CodeNotFound)
		})
	}
	if n := countBanks(); n != stored {
		t.Errorf("%d banks stored by refused requests", n-stored)
	}

	t.Run("ValidationBeforeNotFound", func(t *testing.T) {
		// A faulty body is a 422 whoever asks (CONTRACT.md section 3: 422 before 404).
		_, err := w.svc.AddPayeeBank(ctx, w.platformID, foreignUser, body("GB", "GB29NWBK60161331926818", func(b *payments.NewPayeeBank) { b.PayeeID = foreignPayee }))
		errorOf(t, err, payments.CodeInvalid)
	})
}

// Null means absent (issue 9): a field sent as null is a field left out, for the request's
// schema and for the destination country's rules alike. A field a country does not list
// may be sent as null; a mandatory one sent as null is missing, and its entry shows the
// body as the client sent it, nulls included.
func TestAddPayeeBank_NullMeansAbsent(t *testing.T) {
	ctx := context.Background()
	w := newCBWorld(t)
	db := rawDB(t, w.path)
	// bank decodes an Add Payee Bank body as the HTTP layer does, into the value and the
	// option saying it was validated; fields are JSON members.
	bank := func(fields string) (payments.Call, payments.NewPayeeBank, object) {
		raw := `{"payee_id":"` + w.payeeID + `",` + fields + `}`
		var sent object
		if err := json.Unmarshal([]byte(raw), &sent); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		req := payments.Request{Path: map[string]string{"user_id": w.userID}, Body: []byte(raw)}
		var in payments.NewPayeeBank
		v, err := w.svc.DecodeValue(req, &in)
		if err != nil {
			t.Fatalf("DecodeValue %s: %v", raw, err)
		}
		return payments.Validated(v), in, sent
	}

	for _, tc := range []struct {
		name, withNulls, without string
	}{
		{"IN", `"account_number":"` + accountIN + `","country":"IN","bank_acc_type":"savings","identifier_value":"` + ifscOK +
			`","identifier_type":null,"bank_nick_name":null,"payout_bank_id":null`,
			`"account_number":"` + accountIN + `","country":"IN","bank_acc_type":"savings","identifier_value":"` + ifscOK + `"`},
		{"GBFieldsNotListed", `"account_number":"` + ibanGB + `","country":"GB","bank_acc_type":"current","identifier_type":null,
			"identifier_value":null,"payout_bank_id":null,"bank_nick_name":null`,
			`"account_number":"` + ibanGB + `","country":"GB","bank_acc_type":"current"`},
		{"PKOptionalBankID", `"account_number":"` + ibanPK + `","country":"PK","bank_acc_type":"savings","payout_bank_id":null`,
			`"account_number":"` + ibanPK + `","country":"PK","bank_acc_type":"savings"`},
	} {
		t.Run("OK/"+tc.name, func(t *testing.T) {
			validated, in, _ := bank(tc.withNulls)
			got, err := w.svc.AddPayeeBank(ctx, w.platformID, w.userID, in, validated)
			if err != nil {
				t.Fatal(err)
			}
			validated, absentIn, _ := bank(tc.without)
			absent, err := w.svc.AddPayeeBank(ctx, w.platformID, w.userID, absentIn, validated)
			if err != nil {
				t.Fatal(err)
			}
			got.BankID, got.CreatedAt, got.UpdatedAt = absent.BankID, absent.CreatedAt, absent.UpdatedAt
			if g, w := canonicalJSON(t, got), canonicalJSON(t, absent); g != w {
				t.Errorf("with nulls:\n got %s\nwant %s (the fields left out)", g, w)
			}
			if n := queryInt(t, db, `SELECT count(*) FROM payee_banks WHERE bank_nick_name IS NULL AND payout_bank_id IS NULL
				AND country = $1`, in.Country); n != 2 {
				t.Errorf("%d banks of %s stored without nick name and bank id, want 2", n, in.Country)
			}
		})
	}

	t.Run("ErrMandatoryNullIsMissing", func(t *testing.T) {
		validated, in, sent := bank(`"account_number":"` + accountIN + `","country":"IN","bank_acc_type":"savings","identifier_value":null,"identifier_type":"IFSC"`)
		_, err := w.svc.AddPayeeBank(ctx, w.platformID, w.userID, in, validated)
		assertFields(t, err, fieldErrors{missing(sent, "body", "identifier_value")})
	})

	t.Run("ErrOthersBesideNull", func(t *testing.T) {
		validated, in, _ := bank(`"account_number":"` + ibanGB + `","country":"GB","bank_acc_type":"current","identifier_value":null,"identifier_type":"IFSC"`)
		_, err := w.svc.AddPayeeBank(ctx, w.platformID, w.userID, in, validated)
		assertFields(t, err, fieldErrors{ruleValueError("identifier_type is not accepted for GB", "IFSC", "body", "identifier_type")})
	})
}

func TestProviderAccountType(t *testing.T) {
	for in, want := range map[string]string{"savings": "AHO", "current": "CTE", "no_needed": "NON"} {
		got, err := payments.ProviderAccountType(in)
		if err != nil || got != want {
			t.Errorf("ProviderAccountType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "SAVINGS", "Savings", "checking", "no needed", "AHO"} {
		got, err := payments.ProviderAccountType(in)
		if e := errorOf(t, err, payments.CodeInvalid); got != "" || e.Message == "" {
			t.Errorf("ProviderAccountType(%q) = %q, %v", in, got, err)
		}
	}
}

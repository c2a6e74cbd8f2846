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

// Payee addresses (CONTRACT.md section 5, issue 4).

// fullAddress sets every stored field, including those never shown.
func fullAddress() payments.NewPayeeAddress {
	return payments.NewPayeeAddress{
		Name: "Ravi", LastName: ptr("Kumar"), AddressLine1: "12 MG Road", AddressLine2: ptr("Flat 4B"),
		CompanyName: ptr("Kumar Traders"), City: "Bengaluru", State: "Karnataka", Zipcode: "560001",
		Country: "IN", AddressType: ptr("business"), IsDefault: ptr(true),
	}
}

// hiddenAddressKeys are stored but never part of the address record.
var hiddenAddressKeys = []string{"address_line_2", "company_name", "is_default", "address_type", "contact_id", "payee_id"}

// wantAddressRecord checks the JSON of an address record: exactly the spec's members.
func wantAddressRecord(t *testing.T, a any) {
	t.Helper()
	raw, _ := json.Marshal(a)
	wantKeys(t, "address", raw, "address_line_1", "city", "country", "created_at", "id", "last_name", "name",
		"state", "updated_at", "user_id", "zipcode")
	for _, k := range hiddenAddressKeys {
		if strings.Contains(string(raw), `"`+k+`"`) {
			t.Errorf("address record carries %s: %s", k, raw)
		}
	}
}

func TestAddPayeeAddress(t *testing.T) {
	ctx := context.Background()
	now, _ := fixedClock(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	w := newCBWorld(t, payments.Options{Now: now})
	db := rawDB(t, w.path)

	t.Run("OKEveryFieldStored", func(t *testing.T) {
		in := fullAddress()
		a, err := w.svc.AddPayeeAddress(ctx, w.userID, w.payeeID, in)
		if err != nil {
			t.Fatal(err)
		}
		if a.PayeeID.String() != w.payeeID {
			t.Errorf("user_id = %s, want the payee's id %s", a.PayeeID, w.payeeID)
		}
		if a.Name != "Ravi" || a.LastName == nil || *a.LastName != "Kumar" || a.AddressLine1 != "12 MG Road" ||
			a.City != "Bengaluru" || a.State != "Karnataka" || a.Zipcode != "560001" || a.Country != "IN" {
			t.Errorf("address = %+v", a)
		}
		if !a.CreatedAt.Equal(now()) || a.UpdatedAt != nil {
			t.Errorf("created_at %v updated_at %v", a.CreatedAt, a.UpdatedAt)
		}
		wantAddressRecord(t, a)
		raw, _ := json.Marshal(a)
		var m map[string]any
		json.Unmarshal(raw, &m)
		if m["updated_at"] != nil || m["created_at"] != "2026-05-06T07:08:09Z" {
			t.Errorf("JSON = %s", raw)
		}

		var userID, payeeID, contactID, line2, company, addressType string
		var isDefault int
		if err := db.QueryRow(`SELECT user_id, payee_id, contact_id, address_line_2, company_name, address_type, CAST(is_default AS INTEGER)
			FROM payee_addresses WHERE id = $1`, a.ID.String()).Scan(&userID, &payeeID, &contactID, &line2, &company, &addressType, &isDefault); err != nil {
			t.Fatal(err)
		}
		if userID != w.userID || payeeID != w.payeeID || line2 != "Flat 4B" || company != "Kumar Traders" || addressType != "business" || isDefault != 1 {
			t.Errorf("stored %s %s %q %q %q %d", userID, payeeID, line2, company, addressType, isDefault)
		}
		if _, err := uuid.Parse(contactID); err != nil || contactID == a.ID.String() || contactID == w.payeeID {
			t.Errorf("contact_id %q: want an id of its own", contactID)
		}
	})

	t.Run("OKMinimal", func(t *testing.T) {
		a, err := w.svc.AddPayeeAddress(ctx, w.userID, w.payeeID, payments.NewPayeeAddress{
			Name: "Ravi", AddressLine1: "1 Main St", City: "Pune", State: "MH", Zipcode: "411001", Country: "IN"})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(a)
		if !strings.Contains(string(raw), `"last_name":null`) {
			t.Errorf("last_name not null: %s", raw)
		}
		var line2, company, addressType sql.NullString
		var isDefault int
		if err := db.QueryRow(`SELECT address_line_2, company_name, address_type, CAST(is_default AS INTEGER) FROM payee_addresses WHERE id = $1`,
			a.ID.String()).Scan(&line2, &company, &addressType, &isDefault); err != nil {
			t.Fatal(err)
		}
		if line2.Valid || company.Valid || addressType.Valid || isDefault != 0 {
			t.Errorf("stored %v %v %v %d", line2, company, addressType, isDefault)
		}
	})

	t.Run("OKNullMeansAbsent", func(t *testing.T) {
		// The address JSON of paymentsd address add: every optional field null is stored
		// and answered as if left out (last_name shown as null).
		req := payments.Request{Path: map[string]string{"user_id": w.userID, "payee_id": w.payeeID},
			Body: []byte(`{"name":"Ravi","last_name":null,"address_line_1":"1 Main St","address_line_2":null,
				"company_name":null,"city":"Pune","state":"MH","zipcode":"411001","country":"IN",
				"address_type":null,"is_default":null}`)}
		a, err := w.svc.AddPayeeAddress(ctx, w.userID, w.payeeID, decoded[payments.NewPayeeAddress](t, w.svc, "addresses_add", req))
		if err != nil {
			t.Fatal(err)
		}
		if a.LastName != nil || a.Name != "Ravi" || a.City != "Pune" {
			t.Errorf("address = %+v", a)
		}
		wantAddressRecord(t, a)
		var line2, company, addressType sql.NullString
		var isDefault int
		if err := db.QueryRow(`SELECT address_line_2, company_name, address_type, CAST(is_default AS INTEGER) FROM payee_addresses WHERE id = $1`,
			a.ID.String()).Scan(&line2, &company, &addressType, &isDefault); err != nil {
			t.Fatal(err)
		}
		if line2.Valid || company.Valid || addressType.Valid || isDefault != 0 {
			t.Errorf("stored %v %v %v %d", line2, company, addressType, isDefault)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		otherUser, otherPayee := w.other(t, "grace@example.com")
		for name, ids := range map[string][2]string{
			"OtherUsersPayee": {w.userID, otherPayee},
			"PayeeOfOther":    {otherUser, w.payeeID},
			"UnknownPayee":    {w.userID, uuid.NewString()},
			"UnknownUser":     {uuid.NewString(), w.payeeID},
		} {
			t.Run(name, func(t *testing.T) {
				_, err := w.svc.AddPayeeAddress(ctx, ids[0], ids[1], fullAddress())
				errorOf(t, err, payments.CodeNotFound)
			})
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		bad := fullAddress()
		bad.Country = "India"
		bad.AddressType = ptr("home")
		bad.Zipcode = ""
		_, err := w.svc.AddPayeeAddress(ctx, w.userID, w.payeeID, bad)
		e := errorOf(t, err, payments.CodeInvalid)
		var locs []string
		for _, f := range e.Fields {
			locs = append(locs, canonicalJSON(t, f.Loc)+" "+f.Type)
		}
		want := `["body","zipcode"] string_too_short|["body","country"] string_too_long|["body","address_type"] literal_error`
		if strings.Join(locs, "|") != want {
			t.Errorf("fields %s, want %s", strings.Join(locs, "|"), want)
		}
	})
}

// The address JSON as an operator writes it: null means absent on the optional fields, a
// required field still wants its type, and address_type's literals never list null.
func TestDecode_AddressesAdd(t *testing.T) {
	id := uuid.NewString()
	address := func(fields string) payments.Request {
		return payments.Request{Path: map[string]string{"user_id": id, "payee_id": id}, Body: []byte(`{` + fields + `}`)}
	}
	const required = `"name":"Ravi","address_line_1":"1 Main St","city":"Pune","state":"MH","zipcode":"411001","country":"IN"`
	addressTypes := "'residential', 'business' or 'mailing'"
	runDecodeCases(t, "addresses_add", []decodeCase{
		{"OK", address(required), nil},
		{"OKEveryOptionalNull", address(required + `,"last_name":null,"address_line_2":null,"company_name":null,
			"address_type":null,"is_default":null`), nil},
		{"ErrEveryRequiredNull", address(`"name":null,"address_line_1":null,"city":null,"state":null,"zipcode":null,
			"country":null,"last_name":null`), fieldErrors{
			stringType(nil, "body", "name"),
			stringType(nil, "body", "address_line_1"),
			stringType(nil, "body", "city"),
			stringType(nil, "body", "state"),
			stringType(nil, "body", "zipcode"),
			stringType(nil, "body", "country"),
		}},
		{"ErrAddressType", address(required + `,"address_type":"home"`), fieldErrors{enumErr(addressTypes, "home", "body", "address_type")}},
		{"ErrAddressTypeNumber", address(required + `,"address_type":1`), fieldErrors{enumErr(addressTypes, 1, "body", "address_type")}},
		{"ErrLastNameEmpty", address(required + `,"last_name":""`), fieldErrors{tooShort(1, "", "body", "last_name")}},
		{"ErrIsDefaultNotBoolean", address(required + `,"is_default":"yes"`), fieldErrors{boolErr("yes", "body", "is_default")}},
	})
}

func TestListAndGetPayeeAddresses(t *testing.T) {
	ctx := context.Background()
	now, setNow := fixedClock(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	w := newCBWorld(t, payments.Options{Now: now})
	second := cbPayee(t, w.svc, w.platformID, uuid.MustParse(w.userID), "Second payee").String()
	otherUser, otherPayee := w.other(t, "grace@example.com")
	foreignPlatform, foreignUser, foreignPayee := w.foreign(t)

	add := func(userID, payeeID, name string) payments.PayeeAddress {
		t.Helper()
		setNow(now().Add(time.Second))
		in := fullAddress()
		in.Name = name
		a, err := w.svc.AddPayeeAddress(ctx, userID, payeeID, in)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a1 := add(w.userID, w.payeeID, "First")
	b1 := add(w.userID, second, "Second")
	a2 := add(w.userID, w.payeeID, "Third")
	o1 := add(otherUser, otherPayee, "Other")
	f1 := add(foreignUser, foreignPayee, "Foreign")

	names := func(list []payments.PayeeAddress) string {
		var out []string
		for _, a := range list {
			out = append(out, a.Name)
		}
		return strings.Join(out, ",")
	}

	list := []struct {
		name       string
		platformID uuid.UUID
		userID     string
		payeeID    string
		want       string
	}{
		{"All", w.platformID, w.userID, "", "First,Second,Third"},
		{"OnePayee", w.platformID, w.userID, w.payeeID, "First,Third"},
		{"OnePayeeUpperCase", w.platformID, w.userID, strings.ToUpper(second), "Second"},
		{"PayeeWithoutAddresses", w.platformID, w.userID, cbPayee(t, w.svc, w.platformID, uuid.MustParse(w.userID), "Bare").String(), ""},
		{"UnknownPayee", w.platformID, w.userID, uuid.NewString(), ""},
		{"OtherUsersPayee", w.platformID, w.userID, otherPayee, ""},
		{"ForeignPayee", w.platformID, w.userID, foreignPayee, ""},
		{"OtherUser", w.platformID, otherUser, "", "Other"},
		{"ForeignPlatformOwnUser", foreignPlatform, foreignUser, "", "Foreign"},
	}
	for _, tc := range list {
		t.Run("List/OK/"+tc.name, func(t *testing.T) {
			got, err := w.svc.ListPayeeAddresses(ctx, tc.platformID, tc.userID, tc.payeeID)
			if err != nil {
				t.Fatal(err)
			}
			if names(got) != tc.want {
				t.Errorf("addresses %q, want %q", names(got), tc.want)
			}
			if got == nil {
				t.Error("nil list: it must encode as []")
			}
			if raw, _ := json.Marshal(got); tc.want == "" && string(raw) != "[]" {
				t.Errorf("JSON %s, want []", raw)
			}
			for _, a := range got {
				wantAddressRecord(t, a)
			}
		})
	}

	t.Run("List/RecordsAsAdded", func(t *testing.T) {
		got, err := w.svc.ListPayeeAddresses(ctx, w.platformID, w.userID, "")
		if err != nil {
			t.Fatal(err)
		}
		if canonicalJSON(t, got) != canonicalJSON(t, []payments.PayeeAddress{a1, b1, a2}) {
			t.Errorf("list %s\nwant %s", canonicalJSON(t, got), canonicalJSON(t, []payments.PayeeAddress{a1, b1, a2}))
		}
		if got[1].PayeeID.String() != second {
			t.Errorf("user_id %s, want the payee's %s", got[1].PayeeID, second)
		}
	})

	for name, tc := range map[string]struct {
		platformID uuid.UUID
		userID     string
	}{
		"ForeignUser":     {w.platformID, foreignUser},
		"OtherPlatform":   {foreignPlatform, w.userID},
		"UnknownUser":     {w.platformID, uuid.NewString()},
		"UnknownPlatform": {uuid.New(), w.userID},
	} {
		t.Run("List/ErrNotFound/"+name, func(t *testing.T) {
			_, err := w.svc.ListPayeeAddresses(ctx, tc.platformID, tc.userID, "")
			errorOf(t, err, payments.CodeNotFound)
		})
	}

	t.Run("List/ErrInvalid", func(t *testing.T) {
		_, err := w.svc.ListPayeeAddresses(ctx, w.platformID, "x", "y")
		assertFields(t, err, fieldErrors{
			uuidParsing("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `x` at 1", "x", "path", "user_id"),
			uuidParsing("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `y` at 1", "y", "query", "payee_id"),
		})
	})

	t.Run("Get/OK", func(t *testing.T) {
		for _, want := range []payments.PayeeAddress{a1, b1, a2} {
			got, err := w.svc.GetPayeeAddress(ctx, w.platformID, w.userID, strings.ToUpper(want.ID.String()))
			if err != nil {
				t.Fatal(err)
			}
			if canonicalJSON(t, got) != canonicalJSON(t, want) {
				t.Errorf("Get = %s, want %s", canonicalJSON(t, got), canonicalJSON(t, want))
			}
			wantAddressRecord(t, got)
		}
		got, _ := w.svc.GetPayeeAddress(ctx, foreignPlatform, foreignUser, f1.ID.String())
		if got.ID != f1.ID {
			t.Errorf("the foreign platform cannot read its own address: %+v", got)
		}
	})

	for name, tc := range map[string]struct {
		platformID uuid.UUID
		userID     string
		addressID  string
	}{
		"OtherUsersAddress":       {w.platformID, w.userID, o1.ID.String()},
		"OtherUserPathOwnAddress": {w.platformID, otherUser, a1.ID.String()},
		"ForeignAddress":          {w.platformID, w.userID, f1.ID.String()},
		"ForeignUser":             {w.platformID, foreignUser, f1.ID.String()},
		"OtherPlatformCalling":    {foreignPlatform, w.userID, a1.ID.String()},
		"Unknown":                 {w.platformID, w.userID, uuid.NewString()},
		"PayeeIDIsNotAnAddress":   {w.platformID, w.userID, w.payeeID},
	} {
		t.Run("Get/ErrNotFound/"+name, func(t *testing.T) {
			_, err := w.svc.GetPayeeAddress(ctx, tc.platformID, tc.userID, tc.addressID)
			errorOf(t, err, payments.CodeNotFound)
		})
	}

	t.Run("Get/ErrInvalid", func(t *testing.T) {
		_, err := w.svc.GetPayeeAddress(ctx, w.platformID, w.userID, "1234")
		assertFields(t, err, fieldErrors{uuidParsing("invalid length: expected length 32 for simple format, found 4", "1234", "path", "address_id")})
	})
}

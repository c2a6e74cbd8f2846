package payments_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/validate/entrytest"
)

// Decode, and the expected 422 entries the tests of every operation share. The validator's
// own tables of entries (the users requests against CONTRACT.md section 3, null as
// absent) are package validate's tests.

const anyText = entrytest.AnyText

type fieldErrors = []payments.FieldError

type object = map[string]any

// Expected entries, one constructor per kind (package entrytest).
var (
	loc             = entrytest.Loc
	missing         = entrytest.Missing
	stringType      = entrytest.StringType
	tooShort        = entrytest.TooShort
	tooLong         = entrytest.TooLong
	patternMismatch = entrytest.PatternMismatch
	uuidParsing     = entrytest.UUIDParsing
	emailError      = entrytest.EmailError
	extra           = entrytest.Extra
	notAnObject     = entrytest.NotAnObject
)

func body(s string) payments.Request { return payments.Request{Body: []byte(s)} }

type decodeCase struct {
	name string
	req  payments.Request
	want fieldErrors // nil: the request is valid
}

// runDecodeCases decodes each case's request with the named schema and compares the
// entries, as JSON, with the expected ones.
func runDecodeCases(t *testing.T, schema string, cases []decodeCase) {
	t.Helper()
	svc := mustOpen(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := svc.Decode(schema, tc.req, nil)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Decode = %v, want no error", err)
				}
				return
			}
			assertFields(t, err, tc.want)
		})
	}
}

// assertFields checks that err is a CodeInvalid *payments.Error carrying exactly want.
func assertFields(t *testing.T, err error, want fieldErrors) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", canonicalJSON(t, want))
	}
	e := errorOf(t, err, payments.CodeInvalid)
	got := make(fieldErrors, len(e.Fields))
	copy(got, e.Fields)
	for i := range got {
		if i >= len(want) {
			break
		}
		for k, v := range want[i].Ctx {
			if v != anyText {
				continue
			}
			if s, ok := got[i].Ctx[k].(string); ok && s != "" {
				ctx := object{}
				for k2, v2 := range got[i].Ctx {
					ctx[k2] = v2
				}
				ctx[k] = anyText
				got[i].Ctx = ctx
			}
		}
	}
	if g, w := canonicalJSON(t, got), canonicalJSON(t, want); g != w {
		t.Errorf("fields:\n got %s\nwant %s", g, w)
	}
}

func TestDecode_FillsDestination(t *testing.T) {
	svc := mustOpen(t)
	want := payments.NewUser{Name: "Ada", Phone: ptr("2079460000"), PhoneCountryCode: ptr("+44")}
	for _, raw := range []string{
		`{"phone":"2079460000","name":"Ada","phone_country_code":"+44"}`,
		`{"phone":"2079460000","name":"Ada","phone_country_code":"+44","email":null}`, // null: absent
	} {
		var got payments.NewUser
		if err := svc.Decode("users_create", body(raw), &got); err != nil {
			t.Fatal(err)
		}
		// Compared as JSON: the pointers differ, the strings they point to do not.
		if got.Email != nil || canonicalJSON(t, got) != canonicalJSON(t, want) {
			t.Errorf("%s decoded %+v, want %+v", raw, got, want)
		}
	}

	for raw, want := range map[string]payments.ListUsersParams{
		`{"page_no":3,"rows_per_page":20}`:      {RowsPerPage: 20, PageNo: 3},
		`{"page_no":null,"rows_per_page":null}`: {}, // the defaults, as for {}
	} {
		var params payments.ListUsersParams
		if err := svc.Decode("users_list", body(raw), &params); err != nil {
			t.Fatal(err)
		}
		if params.RowsPerPage != want.RowsPerPage || params.PageNo != want.PageNo {
			t.Errorf("%s decoded %+v, want %+v", raw, params, want)
		}
	}

	// A failing request leaves the destination alone.
	var untouched payments.NewUser
	if err := svc.Decode("users_create", body(`{"name":"Ada","bogus":1}`), &untouched); err == nil {
		t.Fatal("no error")
	}
	if untouched != (payments.NewUser{}) {
		t.Errorf("destination written on failure: %+v", untouched)
	}
}

func TestErrorCode(t *testing.T) {
	invalid := payments.Errorf(payments.CodeInvalid, "bad %s", "thing")
	for _, tc := range []struct {
		name string
		err  error
		code payments.Code
		msg  string
	}{
		{"Nil", nil, "", "Internal error."},
		{"Error", invalid, payments.CodeInvalid, "bad thing"},
		{"Wrapped", fmt.Errorf("context: %w", invalid), payments.CodeInvalid, "bad thing"},
		{"Foreign", errors.New("disk on fire"), payments.CodeInternal, "Internal error."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := payments.ErrorCode(tc.err); got != tc.code {
				t.Errorf("ErrorCode = %q, want %q", got, tc.code)
			}
			if tc.err == nil {
				return
			}
			if got := payments.ErrorMessage(tc.err); got != tc.msg {
				t.Errorf("ErrorMessage = %q, want %q", got, tc.msg)
			}
		})
	}
}

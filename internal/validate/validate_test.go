package validate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/validate"
)

// The 422 entries of the users requests, checked against CONTRACT.md section 3: the
// entries a FastAPI (pydantic v2) service writes, in its order.

// schemaDir holds the request schemas, which the payments package embeds.
var schemaDir = filepath.Join("..", "..", "schema")

func mustNew(tb testing.TB) *validate.Validator {
	tb.Helper()
	v, err := validate.New(os.DirFS(schemaDir))
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

type validateCase struct {
	name string
	req  request
	want fieldErrors // nil: the request is valid
}

func TestValidate_UsersCreate(t *testing.T) {
	long := strings.Repeat("é", 101) // 101 characters, 202 bytes
	depth32, value31 := nested(31)   // the body object is the first level
	depth33, _ := nested(32)

	runCases(t, "users_create", []validateCase{
		{"OK", body(`{"name":"Ada Lovelace","email":"ada@example.com","phone_country_code":"+44","phone":"2079460000"}`), nil},
		{"OKLengthsCountCharacters", body(`{"name":"` + long[2:] + `","email":"a@example.com"}`), nil},

		// One keyword class at a time.
		{"ErrNameRequired", body(`{"email":"ada@example.com"}`), fieldErrors{
			missing(object{"email": "ada@example.com"}, "body", "name")}},
		{"ErrNameType", body(`{"name":5}`), fieldErrors{stringType(5, "body", "name")}},
		{"ErrNameNull", body(`{"name":null}`), fieldErrors{stringType(nil, "body", "name")}},

		// Null means absent on an optional field (so a body of nulls has no contact); a
		// required one still wants its type.
		{"OKOptionalNull", body(`{"name":"Ada","email":"ada@example.com","phone_country_code":null,"phone":null}`), nil},
		{"ErrNameNullOptionalNull", body(`{"name":null,"email":null}`), fieldErrors{stringType(nil, "body", "name")}},
		{"OKNullBesideValue", body(`{"name":"Ada","email":"ada@example.com","phone":null}`), nil},
		{"ErrOthersReportedBesideNull", body(`{"name":"","email":null,"phone_country_code":null,"phone":"x"}`), fieldErrors{
			tooShort(1, "", "body", "name"),
			patternMismatch(`^[0-9]+$`, "x", "body", "phone"),
		}},
		{"ErrNameEmpty", body(`{"name":""}`), fieldErrors{tooShort(1, "", "body", "name")}},
		{"ErrNameTooLong", body(`{"name":"` + long + `"}`), fieldErrors{tooLong(100, long, "body", "name")}},
		{"ErrPhoneCountryCodeTooLong", body(`{"name":"a","phone_country_code":"+12345","phone":"1"}`), fieldErrors{
			tooLong(5, "+12345", "body", "phone_country_code")}},
		{"ErrPhoneCountryCodePattern", body(`{"name":"a","phone_country_code":"44","phone":"1"}`), fieldErrors{
			patternMismatch(`^\+[0-9]{1,4}$`, "44", "body", "phone_country_code")}},
		{"ErrPhonePattern", body(`{"name":"a","phone_country_code":"+44","phone":"20-7946"}`), fieldErrors{
			patternMismatch(`^[0-9]+$`, "20-7946", "body", "phone")}},
		{"ErrPhoneLengthBeforePattern", body(`{"name":"a","phone_country_code":"+44","phone":"1234567890123456x"}`), fieldErrors{
			tooLong(15, "1234567890123456x", "body", "phone")}},
		{"ErrEmail", body(`{"name":"a","email":"ada.example.com"}`), fieldErrors{
			emailError("An email address must have an @-sign.", "ada.example.com", "body", "email")}},
		{"ErrEmailEmptyIsOnlyTooShort", body(`{"name":"a","email":""}`), fieldErrors{tooShort(1, "", "body", "email")}},
		{"ErrEmailType", body(`{"name":"a","email":["ada@example.com"]}`), fieldErrors{
			stringType([]any{"ada@example.com"}, "body", "email")}},
		{"ErrExtraForbidden", body(`{"name":"a","email":"a@example.com","nickname":"x"}`), fieldErrors{
			extra("x", "body", "nickname")}},

		// The body as a whole.
		{"ErrBodyArray", body(`[]`), fieldErrors{notAnObject([]any{})}},
		{"ErrBodyString", body(`"Ada"`), fieldErrors{notAnObject("Ada")}},
		{"ErrBodyNumber", body(`1`), fieldErrors{notAnObject(1)}},
		// FastAPI answers a JSON null body as a missing one.
		{"ErrBodyNull", body(`null`), fieldErrors{missing(nil, "body")}},
		{"ErrBodyMissing", request{}, fieldErrors{missing(nil, "body")}},
		{"ErrBodyEmpty", request{body: []byte{}}, fieldErrors{missing(nil, "body")}},

		// Malformed JSON: the offset counts characters, not bytes ("é" is two bytes).
		{"ErrJSONWhitespaceOnly", body("  "), fieldErrors{jsonInvalid(2)}},
		{"ErrJSONOffsetInCharacters", body(`{"name": "é" x}`), fieldErrors{jsonInvalid(13)}},
		{"ErrJSONUnterminated", body(`{"name": "é"`), fieldErrors{jsonInvalid(12)}},
		{"ErrJSONTrailingGarbage", body(`{"name":"é"} x`), fieldErrors{jsonInvalid(13)}},
		{"ErrJSONInvalidUTF8", body("{\"name\":\"é\xff\"}"), fieldErrors{jsonInvalid(10)}},
		{"Nesting32LevelsParsed", body(`{"name":` + depth32 + `}`), fieldErrors{stringType(value31, "body", "name")}},
		{"ErrNesting33Levels", body(`{"name":` + depth33 + `}`), fieldErrors{jsonInvalid(len(`{"name":`) + 31)}},

		// Order: fields as the schema declares them, whatever the order written; one
		// entry per field; undeclared fields last, in the order written.
		{"OrderDeclared", body(`{"phone":"x","phone_country_code":"1","email":"ada","name":""}`), fieldErrors{
			tooShort(1, "", "body", "name"),
			emailError("An email address must have an @-sign.", "ada", "body", "email"),
			patternMismatch(`^\+[0-9]{1,4}$`, "1", "body", "phone_country_code"),
			patternMismatch(`^[0-9]+$`, "x", "body", "phone"),
		}},
		{"OrderMissingAtItsPlace", body(`{"email":"ada"}`), fieldErrors{
			missing(object{"email": "ada"}, "body", "name"),
			emailError("An email address must have an @-sign.", "ada", "body", "email"),
		}},
		{"OrderExtraAsWritten", body(`{"zeta":1,"name":"","alpha":true,"email":"x","mid":null}`), fieldErrors{
			tooShort(1, "", "body", "name"),
			emailError("An email address must have an @-sign.", "x", "body", "email"),
			extra(1, "body", "zeta"),
			extra(true, "body", "alpha"),
			extra(nil, "body", "mid"),
		}},

		// A lone surrogate escape is refused at its field (it decodes to U+FFFD).
		{"ErrLoneSurrogate", body(`{"name":"\ud800","email":"a@example.com"}`), fieldErrors{
			valueError("text must not contain unpaired surrogates or the replacement character U+FFFD", "\ufffd", "body", "name")}},
		{"ErrLowSurrogateInside", body(`{"name":"x\udc00y","email":"a@example.com"}`), fieldErrors{
			valueError("text must not contain unpaired surrogates or the replacement character U+FFFD", "x\ufffdy", "body", "name")}},
	})
}

func TestValidate_UsersList(t *testing.T) {
	rowsLiteral := literal("10, 20, 50 or 100", 15, "body", "rows_per_page")
	pageZero := validate.FieldError{Type: "greater_than_equal", Loc: loc("body", "page_no"), Input: 0,
		Msg: "Input should be greater than or equal to 1", Ctx: object{"ge": 1}}

	runCases(t, "users_list", []validateCase{
		{"OKEmpty", body(`{}`), nil},
		{"OKLimits", body(`{"rows_per_page":100,"page_no":2147483647}`), nil},
		{"OKNull", body(`{"rows_per_page":null,"page_no":null}`), nil},
		{"OKNullBesideValue", body(`{"rows_per_page":20,"page_no":null}`), nil},
		{"ErrRowsPerPageString", body(`{"rows_per_page":"10"}`), fieldErrors{intType("10", "body", "rows_per_page")}},
		{"ErrRowsPerPageFraction", body(`{"rows_per_page":10.0}`), fieldErrors{intType(10.0, "body", "rows_per_page")}},
		{"ErrRowsPerPageExponent", body(`{"rows_per_page":1e1}`), fieldErrors{intType(10.0, "body", "rows_per_page")}},
		{"ErrPageNoFraction", body(`{"page_no":1.0}`), fieldErrors{intType(1.0, "body", "page_no")}},
		// The schema's enumeration holds null (null means absent); the message does not.
		{"ErrRowsPerPageLiteral", body(`{"rows_per_page":15}`), fieldErrors{rowsLiteral}},
		{"ErrPageNoZero", body(`{"page_no":0}`), fieldErrors{pageZero}},
		{"ErrPageNoTooLarge", body(`{"page_no":2147483648}`), fieldErrors{{Type: "less_than_equal",
			Loc: loc("body", "page_no"), Input: 2147483648,
			Msg: "Input should be less than or equal to 2147483647", Ctx: object{"le": 2147483647}}}},
		{"ErrExtraForbidden", body(`{"page":2}`), fieldErrors{extra(2, "body", "page")}},
		{"ErrBodyMissing", request{}, fieldErrors{missing(nil, "body")}},
		{"ErrBodyArray", body(`[1]`), fieldErrors{notAnObject([]any{1})}},
		{"OrderDeclared", body(`{"page_no":0,"rows_per_page":15}`), fieldErrors{rowsLiteral, pageZero}},
	})
}

func TestValidate_UsersGet(t *testing.T) {
	const id = "0f8fad5b-d9cb-469f-a165-70867728950e"
	simple := strings.ReplaceAll(id, "-", "")
	badChar := "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1"

	runCases(t, "users_get", []validateCase{
		{"OK", pathParams("user_id", id), nil},
		{"OKUpperCase", pathParams("user_id", strings.ToUpper(id)), nil},
		{"OKSimple", pathParams("user_id", simple), nil},
		{"OKBraced", pathParams("user_id", "{"+id+"}"), nil},
		{"OKURN", pathParams("user_id", "urn:uuid:"+id), nil},
		{"ErrCharacter", pathParams("user_id", "not-a-uuid"), fieldErrors{uuidParsing(badChar, "not-a-uuid", "path", "user_id")}},
		{"ErrSimpleLength", pathParams("user_id", "1234"), fieldErrors{
			uuidParsing("invalid length: expected length 32 for simple format, found 4", "1234", "path", "user_id")}},
		{"ErrGroupCount", pathParams("user_id", "1234-5678"), fieldErrors{
			uuidParsing("invalid group count: expected 5, found 2", "1234-5678", "path", "user_id")}},
		{"ErrGroupLength", pathParams("user_id", id[1:]), fieldErrors{
			uuidParsing("invalid group length in group 0: expected 8, found 7", id[1:], "path", "user_id")}},
		// pydantic's parser takes the simple form bare only: braced or prefixed, it wants
		// the hyphenated form.
		{"ErrBracedSimple", pathParams("user_id", "{"+simple+"}"), fieldErrors{
			uuidParsing("invalid group count: expected 5, found 1", "{"+simple+"}", "path", "user_id")}},
		{"ErrURNSimple", pathParams("user_id", "urn:uuid:"+simple), fieldErrors{
			uuidParsing("invalid group count: expected 5, found 1", "urn:uuid:"+simple, "path", "user_id")}},
		{"ErrMissing", request{}, fieldErrors{missing(nil, "path", "user_id")}},
	})
}

// A query parameter left out is missing; one sent empty is its value, too short.
func TestValidate_Query(t *testing.T) {
	runCases(t, "rules_get", []validateCase{
		{"OK", request{query: map[string]string{"country_code": "IN", "payout_currency": "INR"}}, nil},
		{"ErrLeftOut", request{query: map[string]string{"payout_currency": "INR"}}, fieldErrors{
			missing(nil, "query", "country_code")}},
		{"ErrSentEmpty", request{query: map[string]string{"country_code": "", "payout_currency": "INR"}}, fieldErrors{
			tooShort(1, "", "query", "country_code")}},
		{"OKUndeclaredParameter", request{query: map[string]string{"country_code": "IN", "payout_currency": "INR", "x": "1"}}, nil},
	})
}

// runCases validates each case's request with the named schema and compares the entries,
// as JSON, with the expected ones.
func runCases(t *testing.T, schema string, cases []validateCase) {
	t.Helper()
	v := mustNew(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, got, err := v.Validate(schema, tc.req.path, tc.req.query, tc.req.body)
			if err != nil {
				t.Fatal(err)
			}
			assertFields(t, got, tc.want)
		})
	}
}

// Null means absent (issue 9): on every optional body field of every request schema, a
// JSON null is accepted as the field left out; on a required field it is pydantic's error
// for the field's type (string_type, int_type, bool_type; literal_error for a literal).
// The schema files are read from disk: the test follows them as they grow.
func TestValidate_NullMeansAbsent(t *testing.T) {
	v := mustNew(t)
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("schema files: %v %v", files, err)
	}
	typeErrors := map[string]validate.FieldError{
		"string":  stringType(nil),
		"integer": intType(nil),
		"boolean": boolType(nil),
	}
	seen := 0
	for _, file := range files {
		var schema struct {
			Properties struct {
				Body struct {
					Type       any                       `json:"type"`
					Properties map[string]map[string]any `json:"properties"`
					Required   []string                  `json:"required"`
				} `json:"body"`
			} `json:"properties"`
		}
		raw, err := os.ReadFile(file) // #nosec G304 -- a schema file of the repository
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		b := schema.Properties.Body
		if b.Type != "object" { // defs.json, and the rules file (an array)
			continue
		}
		for field, prop := range b.Properties {
			seen++
			required := slices.Contains(b.Required, field)
			t.Run(name+"/"+field, func(t *testing.T) {
				// Other fields fail (missing, mostly) at their own loc: only this one matters.
				_, all, err := v.Validate(name, nil, nil, []byte(`{"`+field+`":null}`))
				if err != nil {
					t.Fatal(err)
				}
				var got fieldErrors
				for _, f := range all {
					if len(f.Loc) == 2 && f.Loc[0] == "body" && f.Loc[1] == field {
						got = append(got, f)
					}
				}
				if !required {
					if len(got) != 0 {
						t.Errorf("null on optional %s: %s, want accepted", field, canonicalJSON(t, got))
					}
					return
				}
				var want validate.FieldError
				switch typ := prop["type"].(type) {
				case string:
					want = typeErrors[typ]
				case nil: // a literal: its values, as pydantic lists them
					values := prop["enum"].([]any)
					quoted := make([]string, len(values))
					for i, v := range values {
						quoted[i] = "'" + v.(string) + "'"
					}
					want = literal(strings.Join(quoted[:len(quoted)-1], ", ")+" or "+quoted[len(quoted)-1], nil)
				default:
					t.Fatalf("required %s has type %v: a required field has one type, never null", field, typ)
				}
				want.Loc = loc("body", field)
				assertFields(t, got, fieldErrors{want})
			})
		}
	}
	if seen < 40 {
		t.Errorf("%d body fields checked: the schema files were not read as expected", seen)
	}
}

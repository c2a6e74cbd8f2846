package payments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
)

// The contact rules of Create User and Create Payee live in the schemas (defs.json's
// phone_with_its_code and a_contact): a phone goes with its country code, and a user needs
// an email or a phone with its code. They are pydantic model validators: one value_error at
// ["body"], its input the body as sent, and only when the body meets the rest of its
// schema. A member sent as null is absent.

const (
	phoneRule   = "phone and phone_country_code must be given together"
	contactRule = "at least one contact method is required: an email, or a phone with its phone_country_code"
)

// ruleErr is the entry of a failed contact rule on a body as sent.
func ruleErr(t *testing.T, reason, raw string) payments.FieldError {
	t.Helper()
	var sent object
	if err := json.Unmarshal([]byte(raw), &sent); err != nil {
		t.Fatal(err)
	}
	return payments.FieldError{Type: "value_error", Loc: loc("body"), Msg: "Value error, " + reason, Input: sent,
		Ctx: object{"error": object{}}}
}

// The rules, case by case, as a client sends them (through Decode, as the HTTP server does)
// and as a Go caller gives them (the operation validates its value: no nulls there, and
// the input shows the value encoded, nil fields left out).
func TestContactRules(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p := mustPlatform(t, svc)
	caller := mustCaller(t, svc, mustUser(t, svc, p.PlatformID, "Owner", "owner@example.com").UserID)

	for i, tc := range []struct {
		name        string
		raw         string
		user, payee string // the rule refusing the body, "" when it is accepted
	}{
		{"EmailOnly", `{"name":"Ada","email":"ada@example.com"}`, "", ""},
		{"PhoneWithCode", `{"name":"Ada","phone_country_code":"+44","phone":"2079460000"}`, "", ""},
		{"EmailAndPhoneWithCode", `{"name":"Ada","email":"ada@example.com","phone_country_code":"+44","phone":"2079460000"}`, "", ""},
		{"PhoneOnly", `{"name":"Ada","phone":"2079460000"}`, phoneRule, phoneRule}, // both rules fail: the first listed reports
		{"CodeOnly", `{"name":"Ada","phone_country_code":"+44"}`, phoneRule, phoneRule},
		{"EmailAndPhone", `{"name":"Ada","email":"ada@example.com","phone":"2079460000"}`, phoneRule, phoneRule},
		{"EmailAndCode", `{"name":"Ada","email":"ada@example.com","phone_country_code":"+44"}`, phoneRule, phoneRule},
		{"Neither", `{"name":"Ada"}`, contactRule, ""},

		// Null means absent, and the entry shows the body as sent, nulls included.
		{"NullEmail", `{"name":"Ada","email":null}`, contactRule, ""},
		{"AllNull", `{"name":"Ada","email":null,"phone_country_code":null,"phone":null}`, contactRule, ""},
		{"EmailNullPhoneAndCode", `{"name":"Ada","email":"ada@example.com","phone_country_code":null,"phone":null}`, "", ""},
		{"NullEmailPhoneWithCode", `{"name":"Ada","email":null,"phone_country_code":"+44","phone":"2079460000"}`, "", ""},
		{"PhoneNullCode", `{"name":"Ada","phone":"2079460000","phone_country_code":null}`, phoneRule, phoneRule},
		{"CodeNullPhone", `{"name":"Ada","email":"ada@example.com","phone_country_code":"+44","phone":null}`, phoneRule, phoneRule},
		{"NullEmailPhoneNullCode", `{"name":"Ada","email":null,"phone":"2079460000","phone_country_code":null}`, phoneRule, phoneRule},
	} {
		// Each accepted user needs an email of its own.
		raw := strings.ReplaceAll(tc.raw, "ada@", fmt.Sprintf("ada%d@", i))
		for _, op := range []struct{ schema, rule string }{{"users_create", tc.user}, {"payees_create", tc.payee}} {
			t.Run(op.schema+"/"+tc.name, func(t *testing.T) {
				var want fieldErrors
				if op.rule != "" {
					want = fieldErrors{ruleErr(t, op.rule, raw)}
				}
				// As a client sends it: the 422 is Decode's, before any operation runs.
				var err error
				if op.schema == "users_create" {
					var in payments.NewUser
					if err = svc.Decode(op.schema, body(raw), &in); err == nil {
						_, err = svc.CreateUser(ctx, p.PlatformID, in)
					}
				} else {
					var in payments.NewPayee
					if err = svc.Decode(op.schema, body(raw), &in); err == nil {
						_, err = svc.CreatePayee(ctx, caller, in)
					}
				}
				checkRule(t, err, want)

				// As a Go caller gives it.
				var value any
				if op.schema == "users_create" {
					var in payments.NewUser
					json.Unmarshal([]byte(raw), &in)
					in.Name += " again"
					if in.Email != nil {
						in.Email = ptr("go." + *in.Email)
					}
					value = in
					_, err = svc.CreateUser(ctx, p.PlatformID, in)
				} else {
					var in payments.NewPayee
					json.Unmarshal([]byte(raw), &in)
					value = in
					_, err = svc.CreatePayee(ctx, caller, in)
				}
				if want != nil {
					encoded, _ := json.Marshal(value)
					want = fieldErrors{ruleErr(t, op.rule, string(encoded))}
				}
				checkRule(t, err, want)
			})
		}
	}
}

// checkRule checks that err is nil when want is, and carries exactly want otherwise.
func checkRule(t *testing.T, err error, want fieldErrors) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	assertFields(t, err, want)
}

// Every combination of the three contact members (left out, null, given) against the rule
// as the service applied it in Go before it moved into the schemas, alone and beside other
// failures: the schema's failures are the whole 422 then, the rule's only when there are
// none.
func TestContactRulesEveryCombination(t *testing.T) {
	svc := mustOpen(t)
	states := []string{"out", "null", "given"}
	given := map[string]string{"email": `"ada@example.com"`, "phone_country_code": `"+44"`, "phone": `"2079460000"`}
	others := []struct {
		name    string
		members string // added to the body
		want    func(raw string) fieldErrors
	}{
		{"", `"name":"Ada"`, nil},
		{"NameEmpty", `"name":""`, func(string) fieldErrors { return fieldErrors{tooShort(1, "", "body", "name")} }},
		{"NameMissing", `"nickname":"Ada"`, func(raw string) fieldErrors {
			var sent object
			json.Unmarshal([]byte(raw), &sent)
			return fieldErrors{missing(sent, "body", "name"), extra("Ada", "body", "nickname")}
		}},
	}
	seen := 0
	for _, email := range states {
		for _, code := range states {
			for _, phone := range states {
				members := map[string]string{"email": email, "phone_country_code": code, "phone": phone}
				for _, other := range others {
					parts := []string{other.members}
					for _, field := range []string{"email", "phone_country_code", "phone"} {
						switch members[field] {
						case "null":
							parts = append(parts, `"`+field+`":null`)
						case "given":
							parts = append(parts, `"`+field+`":`+given[field])
						}
					}
					raw := "{" + strings.Join(parts, ",") + "}"
					for _, schema := range []string{"users_create", "payees_create"} {
						seen++
						t.Run(schema+"/"+raw, func(t *testing.T) {
							var want fieldErrors
							if other.want != nil {
								want = other.want(raw)
							} else if reason := contactRuleInGo(members, schema == "users_create"); reason != "" {
								want = fieldErrors{ruleErr(t, reason, raw)}
							}
							checkRule(t, svc.Decode(schema, body(raw), nil), want)
						})
					}
				}
			}
		}
	}
	if seen != 27*3*2 {
		t.Errorf("%d combinations checked, want %d", seen, 27*3*2)
	}
}

// contactRuleInGo is the contact rule as users.go applied it before the schemas held it:
// the reference the schemas must agree with.
func contactRuleInGo(members map[string]string, userNeedsContact bool) string {
	hasEmail, hasCode, hasPhone := members["email"] == "given", members["phone_country_code"] == "given", members["phone"] == "given"
	switch {
	case hasPhone != hasCode:
		return phoneRule
	case userNeedsContact && !hasEmail && !hasPhone:
		return contactRule
	}
	return ""
}

// A contact member failing its own schema is that member's entry alone: the rules run on
// a body whose fields are valid.
func TestContactRulesAfterTheFields(t *testing.T) {
	runDecodeCases(t, "users_create", []decodeCase{
		{"ErrPhonePatternWithoutCode", body(`{"name":"Ada","phone":"20-7946"}`), fieldErrors{
			patternMismatch(`^[0-9]+$`, "20-7946", "body", "phone")}},
		{"ErrCodeTypeWithoutPhone", body(`{"name":"Ada","phone_country_code":44}`), fieldErrors{
			stringType(44, "body", "phone_country_code")}},
		{"ErrEmailOnlyContactInvalid", body(`{"name":"Ada","email":"ada.example.com"}`), fieldErrors{
			emailError("An email address must have an @-sign.", "ada.example.com", "body", "email")}},
		{"ErrEmailEmptyNoOtherContact", body(`{"name":"Ada","email":""}`), fieldErrors{tooShort(1, "", "body", "email")}},
	})
	runDecodeCases(t, "payees_create", []decodeCase{
		{"ErrPhonePatternWithoutCode", body(`{"name":"Priya","phone":"98765 43210"}`), fieldErrors{
			patternMismatch(`^[0-9]+$`, "98765 43210", "body", "phone")}},
		{"ErrBodyNotAnObject", body(`["Priya"]`), fieldErrors{notAnObject([]any{"Priya"})}},
	})
}

// BenchmarkContactRules measures what the rules add to validating a body: compare with
// payees_update, whose body has no rules.
//
//	go test -run '^$' -bench ContactRules -benchmem .
func BenchmarkContactRules(b *testing.B) {
	svc := mustOpen(b)
	for _, bc := range []struct{ name, schema, raw string }{
		{"users/email", "users_create", `{"name":"Ada Lovelace","email":"ada@example.com"}`},
		{"users/phone", "users_create", `{"name":"Ada Lovelace","phone_country_code":"+44","phone":"2079460000"}`},
		{"users/all", "users_create", `{"name":"Ada Lovelace","email":"ada@example.com","phone_country_code":"+44","phone":"2079460000"}`},
		{"payees/none", "payees_create", `{"name":"Priya"}`},
		{"payees/all", "payees_create", `{"name":"Priya","email":"priya@example.com","phone_country_code":"+91","phone":"9876543210"}`},
		{"payees_update", "payees_update", `{"payee_id":"7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41","name":"Priya"}`},
	} {
		req := body(bc.raw)
		if bc.schema == "payees_update" {
			req.Path = map[string]string{"user_id": "7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41"}
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := svc.Decode(bc.schema, req, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

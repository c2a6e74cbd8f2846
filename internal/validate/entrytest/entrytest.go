// Package entrytest builds the 422 entries tests expect, one constructor per kind of
// failure, with pydantic v2's type, message and ctx, so that the validator's own tests
// and the tests of every operation state an expected entry the same way.
package entrytest

import (
	"fmt"

	"github.com/platform-payments/payments/internal/validate"
)

// AnyText, as an expected ctx value, stands for any non-empty text: the contract leaves
// the wording of the JSON decoder's messages (ctx.error of json_invalid) to us.
const AnyText = "<any text>"

type object = map[string]any

// Loc returns its arguments: an entry's location.
func Loc(parts ...any) []any { return parts }

// Missing: a required field left out (or null).
func Missing(input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "missing", Loc: l, Msg: "Field required", Input: input}
}

// StringType: a value that should be a string.
func StringType(input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "string_type", Loc: l, Msg: "Input should be a valid string", Input: input}
}

// TooShort: a string shorter than n characters.
func TooShort(n int, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "string_too_short", Loc: l, Input: input,
		Msg: fmt.Sprintf("String should have at least %d character%s", n, Plural(n)),
		Ctx: object{"min_length": n}}
}

// TooLong: a string longer than n characters.
func TooLong(n int, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "string_too_long", Loc: l, Input: input,
		Msg: fmt.Sprintf("String should have at most %d character%s", n, Plural(n)),
		Ctx: object{"max_length": n}}
}

// PatternMismatch: a string that does not match pattern.
func PatternMismatch(pattern string, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "string_pattern_mismatch", Loc: l, Input: input,
		Msg: "String should match pattern '" + pattern + "'",
		Ctx: object{"pattern": pattern}}
}

// IntType: a value that should be an integer.
func IntType(input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "int_type", Loc: l, Msg: "Input should be a valid integer", Input: input}
}

// BoolType: a value that should be a boolean.
func BoolType(input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "bool_type", Loc: l, Msg: "Input should be a valid boolean", Input: input}
}

// Literal: a value that should be expected (pydantic's wording of the choices).
func Literal(expected string, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "literal_error", Loc: l, Msg: "Input should be " + expected, Input: input,
		Ctx: object{"expected": expected}}
}

// UUIDParsing: a malformed UUID, for reason.
func UUIDParsing(reason string, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "uuid_parsing", Loc: l, Input: input,
		Msg: "Input should be a valid UUID, " + reason,
		Ctx: object{"error": reason}}
}

// EmailError: an email address refused for reason.
func EmailError(reason string, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "value_error", Loc: l, Input: input,
		Msg: "value is not a valid email address: " + reason,
		Ctx: object{"reason": reason}}
}

// ValueError: a value refused by a check of ours, for reason.
func ValueError(reason string, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "value_error", Loc: l, Input: input,
		Msg: "Value error, " + reason, Ctx: object{"error": object{}}}
}

// Extra: a field the request does not have.
func Extra(input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "extra_forbidden", Loc: l, Msg: "Extra inputs are not permitted", Input: input}
}

// NotAnObject: a body that is JSON but not an object.
func NotAnObject(input any) validate.FieldError {
	return validate.FieldError{Type: "model_attributes_type", Loc: Loc("body"), Input: input,
		Msg: "Input should be a valid dictionary or object to extract fields from"}
}

// JSONInvalid: a body that is not JSON, failing at offset.
func JSONInvalid(offset int) validate.FieldError {
	return validate.FieldError{Type: "json_invalid", Loc: Loc("body", offset), Msg: "JSON decode error",
		Input: object{}, Ctx: object{"error": AnyText}}
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

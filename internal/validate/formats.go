package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// The JSON Schema formats of schema/, each with the check the validator runs and the entry
// a failure becomes. A format names a rule that a pattern cannot say well (a checksum, a
// code list, a reason to report), so the schema files still say where each rule applies.
type format struct {
	valid    func(any) bool
	describe func(fe *FieldError, value any)
}

// LocalTimeLayout is the layout of the local-date-time format: a date and time in UTC,
// without an offset.
const LocalTimeLayout = "2006-01-02T15:04:05"

var formats = map[string]format{
	// A UUID in any form pydantic's UUID type takes: hyphenated, simple (32 hex digits),
	// braced or urn:uuid: prefixed, any case.
	"uuid": stringFormat(uuidProblem, func(fe *FieldError, reason string) {
		fe.Type, fe.Msg = "uuid_parsing", "Input should be a valid UUID, "+reason
		fe.Ctx = map[string]any{"error": reason}
	}),
	"email": stringFormat(emailProblem, func(fe *FieldError, reason string) {
		fe.Type, fe.Msg = "value_error", "value is not a valid email address: "+reason
		fe.Ctx = map[string]any{"reason": reason}
	}),
	// A US routing transit number: nine digits whose weighted sum (3, 7, 1 repeating) is
	// a multiple of ten. The schema's pattern reports anything that is not nine digits.
	"aba-routing": valueErrorFormat(func(s string) string {
		if len(s) != 9 || strings.Trim(s, "0123456789") != "" {
			return ""
		}
		sum := 0
		for i, weight := range []int{3, 7, 1, 3, 7, 1, 3, 7, 1} {
			sum += int(s[i]-'0') * weight
		}
		if sum%10 != 0 {
			return "routing_number fails the ABA checksum"
		}
		return ""
	}),
	// Free text that ends up on payouts, statements and screens: see TextProblem.
	"text":           valueErrorFormat(TextProblem),
	"iso4217":        valueErrorFormat(currencyProblem),
	"iso3166-alpha2": valueErrorFormat(countryProblem),
	// A decimal greater than zero (the pattern has checked its digits).
	"positive-decimal": valueErrorFormat(func(s string) string {
		if strings.Trim(s, "0.") == "" {
			return "must be greater than zero"
		}
		return ""
	}),
	// A calendar date and time without offset, YYYY-MM-DDTHH:MM:SS (the pattern has
	// checked its shape).
	"local-date-time": valueErrorFormat(func(s string) string {
		if _, err := time.Parse(LocalTimeLayout, s); err != nil {
			return "not a valid date and time"
		}
		return ""
	}),
	// An RFC 3339 date and time with its offset, such as 2026-01-02T15:04:05Z.
	"date-time": valueErrorFormat(func(s string) string {
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return "not an RFC 3339 date and time"
		}
		return ""
	}),
	// JSON integers only: 10.0 and 1e1 are numbers, not integers, although JSON Schema's
	// "integer" type takes them.
	"strict-integer": {
		valid: func(v any) bool {
			n, ok := v.(json.Number)
			return !ok || !strings.ContainsAny(string(n), ".eE")
		},
		describe: func(fe *FieldError, _ any) {
			fe.Type, fe.Msg = "int_type", "Input should be a valid integer"
		},
	},
}

// TextProblem says what is wrong with free text (names, addresses, labels), "" when
// nothing is. Text in every script is accepted, emoji and their joiners included, and so
// are the bidirectional marks (U+200E, U+200F, U+061C) that right-to-left writing uses.
// Refused, because they corrupt or disguise what a bank, a statement or a person reads:
//   - control characters (C0, DEL, C1) and the line and paragraph separators U+2028 and
//     U+2029, which break the line-based files payouts travel in;
//   - the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069),
//     which make text display in another order than it is stored;
//   - U+FFFD, the replacement character: it is what a lone surrogate escape ("\ud800")
//     decodes to, and it marks text already corrupted on its way in;
//   - text without a visible character: only spaces, invisible format characters, fillers
//     (U+3164, U+FFA0...), blank braille or lone combining marks.
func TextProblem(s string) string {
	visible := false
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			return "text must not contain unpaired surrogates or the replacement character U+FFFD"
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			return "text must not contain control characters or line separators"
		case r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069':
			return "text must not contain bidirectional embedding, override or isolate characters"
		}
		visible = visible || isVisible(r)
	}
	if !visible {
		return "text must contain at least one visible character"
	}
	return ""
}

// isVisible reports whether r draws something by itself: a letter, digit, punctuation mark
// or symbol that Unicode does not mark as ignorable (as the Hangul fillers are), and not
// the blank braille pattern.
func isVisible(r rune) bool {
	return unicode.In(r, unicode.L, unicode.N, unicode.P, unicode.S) &&
		!unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) && r != '\u2800'
}

// stringFormat makes a format of a function returning what is wrong with a string ("" when
// nothing is). Values of other types pass: the schema's "type" keyword reports them.
func stringFormat(problem func(string) string, report func(fe *FieldError, reason string)) format {
	return format{
		valid: func(v any) bool {
			s, ok := v.(string)
			return !ok || problem(s) == ""
		},
		describe: func(fe *FieldError, v any) {
			s, _ := v.(string)
			report(fe, problem(s))
		},
	}
}

// valueErrorFormat makes a format for a rule beyond JSON Schema, reported as pydantic
// reports a failing validator function.
func valueErrorFormat(problem func(string) string) format {
	return stringFormat(problem, func(fe *FieldError, reason string) {
		fe.Type, fe.Msg = "value_error", "Value error, "+reason
		fe.Ctx = map[string]any{"error": map[string]any{}}
	})
}

// uuidProblem says why s is not a UUID, in the words of the uuid parser pydantic uses.
// The forms accepted are exactly those uuid.Parse accepts (and pydantic too): 36
// characters hyphenated, 32 hex digits, and the hyphenated form braced or urn:uuid:
// prefixed.
func uuidProblem(s string) string {
	if _, err := uuid.Parse(s); err == nil {
		return ""
	}
	hexDigit := func(r rune) bool {
		return r < utf8.RuneSelf && (r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F')
	}
	body := s
	switch {
	case strings.HasPrefix(body, "urn:uuid:"):
		body = body[len("urn:uuid:"):]
	case strings.HasPrefix(body, "{") && strings.HasSuffix(body, "}") && len(body) >= 2:
		body = body[1 : len(body)-1]
	}
	offset := utf8.RuneCountInString(s[:len(s)-len(body)])
	for i, r := range []rune(body) {
		if r != '-' && !hexDigit(r) {
			return fmt.Sprintf("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `%c` at %d", r, offset+i+1)
		}
	}
	if !strings.Contains(body, "-") && body == s {
		return fmt.Sprintf("invalid length: expected length 32 for simple format, found %d", len(body))
	}
	groups := strings.Split(body, "-")
	if len(groups) != 5 {
		return fmt.Sprintf("invalid group count: expected 5, found %d", len(groups))
	}
	for i, want := range []int{8, 4, 4, 4, 12} {
		if len(groups[i]) != want {
			return fmt.Sprintf("invalid group length in group %d: expected %d, found %d", i, want, len(groups[i]))
		}
	}
	return "invalid format"
}

// emailProblem says why s is not a deliverable-looking email address, in the words of the
// email-validator package pydantic uses; "" when it is one.
func emailProblem(s string) string {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return "An email address must have an @-sign."
	}
	local, domain := s[:at], s[at+1:]
	if local == "" {
		return "There must be something before the @-sign."
	}
	if domain == "" {
		return "There must be something after the @-sign."
	}
	if utf8.RuneCountInString(local) > 64 {
		return "The email address is too long before the @-sign."
	}
	var bad []string
	for _, r := range local {
		if !(r == '.' || strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r) || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			bad = appendUnique(bad, string(r))
		}
	}
	if len(bad) > 0 {
		return fmt.Sprintf("The email address contains invalid characters before the @-sign: %s.", quoteAll(bad))
	}
	switch {
	case strings.HasPrefix(local, "."):
		return "An email address cannot start with a period."
	case strings.HasSuffix(local, "."):
		return "An email address cannot have a period immediately before the @-sign."
	case strings.Contains(local, ".."):
		return "An email address cannot have two periods in a row."
	}
	bad = nil
	for _, r := range domain {
		if !(r == '.' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			bad = appendUnique(bad, string(r))
		}
	}
	if len(bad) > 0 {
		return fmt.Sprintf("The part after the @-sign contains invalid characters: %s.", quoteAll(bad))
	}
	switch {
	case strings.HasPrefix(domain, "."):
		return "An email address cannot have a period immediately after the @-sign."
	case strings.HasSuffix(domain, "."):
		return "An email address cannot end with a period."
	case strings.Contains(domain, ".."):
		return "An email address cannot have two periods in a row."
	case !strings.Contains(domain, "."):
		return "The part after the @-sign is not valid. It should have a period."
	}
	labels := strings.Split(domain, ".")
	for _, label := range labels {
		if strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return "The part after the @-sign cannot start or end with a hyphen."
		}
		if utf8.RuneCountInString(label) > 63 {
			return "The part after the @-sign is too long."
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "The part after the @-sign is not valid. It is not within a valid top-level domain."
	}
	return ""
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func quoteAll(list []string) string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = "'" + s + "'"
	}
	return strings.Join(out, ", ")
}

// Package hostile makes the most expensive request bodies an outside probe found for
// Create User, each at most a given size, for the benchmarks and the load probe that
// check what they cost.
package hostile

import (
	"bytes"
	"strconv"
	"strings"
)

// Body is one hostile request body.
type Body struct {
	Name string
	Body []byte
}

// Bodies returns the hostile Create User bodies of at most limit bytes.
func Bodies(limit int) []Body {
	fill := func(open string, item func(i int) string, closing string) []byte {
		var b bytes.Buffer
		b.WriteString(open)
		for i := 0; ; i++ {
			next := item(i)
			if b.Len()+len(next)+len(closing) > limit {
				break
			}
			b.WriteString(next)
		}
		b.WriteString(closing)
		return b.Bytes()
	}
	return []Body{
		// Opening brackets only: malformed, and nested as deep as the body is long.
		{"nesting", bytes.Repeat([]byte("["), limit)},
		// Well-formed but nested limit/2 deep (deeper than encoding/json reads).
		{"nesting-closed", []byte(strings.Repeat("[", limit/2) + strings.Repeat("]", limit/2))},
		// A valid user followed by as many distinct unknown keys as fit: one 422 entry each.
		{"unknown-keys", fill(`{"name":"Ada","email":"ada@example.com"`,
			func(i int) string { return `,"` + strconv.FormatInt(int64(i), 36) + `":0` }, "}")},
		// One name of two-byte characters filling the body.
		{"long-string", fill(`{"name":"`, func(int) string { return "é" }, `","email":"ada@example.com"}`)},
		// A name of escaped lone surrogates filling the body.
		{"lone-surrogates", fill(`{"name":"`, func(int) string { return `\ud800` }, `","email":"ada@example.com"}`)},
		// The declared fields again and again, each of the wrong type.
		{"many-fields", fill(`{"name":0`, func(int) string {
			return `,"name":[1,2,3],"email":{"a":1},"phone":false,"phone_country_code":[null]`
		}, "}")},
	}
}

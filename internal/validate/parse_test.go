package validate

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decodeWhole accepts exactly what json.Valid accepts (below MaxDepth), and decodes it as
// DecodeJSON does.
func TestDecodeWhole(t *testing.T) {
	for _, raw := range []string{
		``, ` `, `{}`, ` {} `, "{}\n", "{}\t\r\n ", `{} x`, `{}{}`, `{} {}`, `1`, `12`, `1 2`, `-`, `1.`, `1e5`, `-0`,
		`"a"`, `"a" "b"`, `"\x"`, `"\u12"`, `"\ud800"`, `null`, `nul`, `true false`, `[1,2,]`, `{"a":1,}`,
		`{"a":1}` + "\x00", `{"a":{"b":[1,{"c":null}]}}`, `{"name":"Ada","email":"ada@example.com"}`,
		`{"a":1,"a":2}`, "\ufeff{}", `[]]`, `{"a" 1}`, `01`, `1.5e+3 `,
	} {
		v, ok := decodeWhole([]byte(raw))
		if ok != json.Valid([]byte(raw)) {
			t.Errorf("%q: decodeWhole %v, json.Valid %v", raw, ok, !ok)
			continue
		}
		if ok {
			want, err := DecodeJSON([]byte(raw))
			if err != nil || !reflect.DeepEqual(v, want) {
				t.Errorf("%q: decoded %#v, DecodeJSON %#v (%v)", raw, v, want, err)
			}
		}
	}
}

// FuzzDecodeWhole: decodeWhole and json.Valid agree on any text.
//
//	go test -run '^$' -fuzz FuzzDecodeWhole -fuzztime 1m ./internal/validate
func FuzzDecodeWhole(f *testing.F) {
	for _, seed := range []string{`{"name":"Ada"}`, `1 2`, `[1,{"a":null}] `, `"\u00e9"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if tooDeep(raw) {
			return
		}
		if _, ok := decodeWhole(raw); ok != json.Valid(raw) {
			t.Fatalf("%q: decodeWhole %v, json.Valid %v", raw, ok, !ok)
		}
	})
}

package validate

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of a request body: an array or object opened deeper is
// json_invalid where it opens.
const MaxDepth = 32

// ParseBody decodes a request body as DecodeJSON does, reporting malformed JSON, invalid
// UTF-8 and excessive nesting as pydantic's json_invalid at the character offset of the
// fault.
func ParseBody(raw []byte) (any, *FieldError) {
	if !utf8.Valid(raw) {
		i := 0
		for i < len(raw) {
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		return nil, jsonInvalid(utf8.RuneCount(raw[:i]), "Invalid UTF-8")
	}
	// encoding/json is the fast judge of the well-formed: a text it decodes whole, with
	// nothing but whitespace after the value, is what json.Valid accepts, judged in the
	// decoder's own pass. The scanner, bounded in depth, says where a refused text goes
	// wrong (or where it nests too deep), as Python would. Each costs one pass and memory
	// bounded by MaxDepth, whatever the body.
	deep := tooDeep(raw)
	if !deep {
		if v, ok := decodeWhole(raw); ok {
			return v, nil
		}
	}
	if deep || !json.Valid(raw) {
		pos, msg, ok := jsonSyntaxError(raw)
		if !ok { // both refused it: only a fault of ours gets here
			pos, msg = 0, "Expecting value"
		}
		return nil, jsonInvalid(pos, msg)
	}
	v, err := DecodeJSON(raw)
	if err != nil { // json.Valid said it is valid: only a fault of ours gets here
		return nil, jsonInvalid(0, err.Error())
	}
	return v, nil
}

// DecodeJSON decodes one JSON value, its numbers as json.Number: the form of a body the
// validator works on.
func DecodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// decodeWhole decodes raw as DecodeJSON does, and reports whether raw is that one value
// and whitespace alone (what json.Valid accepts).
func decodeWhole(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	for _, c := range raw[dec.InputOffset():] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return nil, false
		}
	}
	return v, true
}

// jsonInvalid is pydantic's entry for a body that is not JSON, at a character offset.
func jsonInvalid(charOffset int, reason string) *FieldError {
	return &FieldError{
		Type:  "json_invalid",
		Loc:   []any{"body", charOffset},
		Msg:   "JSON decode error",
		Input: map[string]any{},
		Ctx:   map[string]any{"error": reason},
	}
}

// tooDeep reports whether the JSON raw opens an array or object deeper than MaxDepth.
// It is checked before json.Valid, which would keep a stack as deep as the text nests; for
// a malformed text it is only a hint, and jsonSyntaxError settles which fault comes first.
func tooDeep(raw []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > MaxDepth {
				return true
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return false
}

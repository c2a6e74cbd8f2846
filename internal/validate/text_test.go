package validate

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextProblem(t *testing.T) {
	const (
		ok        = ""
		surrogate = "text must not contain unpaired surrogates or the replacement character U+FFFD"
		control   = "text must not contain control characters or line separators"
		bidi      = "text must not contain bidirectional embedding, override or isolate characters"
		invisible = "text must contain at least one visible character"
	)
	tests := []struct {
		name, text, want string
	}{
		{"Latin", "Ada Lovelace", ok},
		{"Accents", "Zoë Saldaña-Ñúñez", ok},
		{"Arabic with a right-to-left mark", "محمد\u200f علي", ok},
		{"Hebrew", "דוד לוי", ok},
		{"Devanagari", "अनुष्का शर्मा", ok},
		{"Chinese", "王小明", ok},
		{"Thai with combining marks", "สมชาย ใจดี", ok},
		{"Emoji", "Ada 😀", ok},
		{"Emoji with joiners and a variation selector", "👩‍👩‍👧 ❤️", ok},
		{"Digits only", "7-Eleven", ok},
		{"Private use", "\ue000x", ok},
		{"NUL", "Ada\x00", control},
		{"Tab", "Ada\tLovelace", control},
		{"Newline", "Ada\nLovelace", control},
		{"DEL", "Ada\x7f", control},
		{"C1", "Ada\u0085", control},
		{"Line separator", "Ada\u2028Lovelace", control},
		{"Paragraph separator", "Ada\u2029", control},
		{"Right-to-left override", "\u202egnp.exe", bidi},
		{"Left-to-right embedding", "a\u202ab", bidi},
		{"First strong isolate", "a\u2068b\u2069", bidi},
		{"Lone surrogate (as decoded)", "Ada\ufffd", surrogate},
		{"Invalid UTF-8 (as a Go caller may pass)", "Ada\xff", surrogate},
		{"Spaces only", "   ", invisible},
		{"No-break and ideographic spaces", "\u00a0\u3000", invisible},
		{"Zero-width characters only", "\u200b\u200c\u200d\u2060\ufeff", invisible},
		{"Hangul fillers", "\u3164\u115f\uffa0", invisible},
		{"Blank braille", "\u2800", invisible},
		{"A lone combining mark", "\u0301", invisible},
		{"Variation selector only", "\ufe0f", invisible},
		{"A control character wins over invisibility", " \x01", control},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TextProblem(tt.text); got != tt.want {
				t.Errorf("TextProblem(%+q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// FuzzTextProblem: any text is judged without a panic, and the verdict agrees with the
// rule read rune by rune.
func FuzzTextProblem(f *testing.F) {
	for _, s := range []string{"Ada", "", " ", "\u202e", "\x00", "😀", "\u3164", "\ufffd", "a\u0301", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		problem := TextProblem(s)
		refused, visible := false, false
		for _, r := range s {
			refused = refused || r == utf8.RuneError || r < 0x20 || r >= 0x7f && r <= 0x9f ||
				strings.ContainsRune("\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", r)
			visible = visible || isVisible(r)
		}
		if (problem == "") != (!refused && visible) {
			t.Errorf("TextProblem(%+q) = %q; refused rune %v, visible rune %v", s, problem, refused, visible)
		}
		// A refused text stays refused whatever is added to it.
		if problem != "" && problem != "text must contain at least one visible character" && TextProblem(s+"Ada") == "" {
			t.Errorf("TextProblem(%+q) = %q, but with a name after it nothing", s, problem)
		}
	})
}

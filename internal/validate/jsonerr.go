package validate

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// jsonSyntaxError finds the first fault of a JSON text that encoding/json refused, or that
// nests too deep, the way Python's json module (and so FastAPI) reports a fault: the
// character offset where the offending token starts, and the decoder's message. Go's
// decoder stops some characters later (after a bad literal, at the end of an unterminated
// string), so its offsets cannot be used as they are.
//
// Two faults are ours, not Python's: NaN and Infinity, which Python reads but JSON does not
// have, are "Expecting value" where they start; and an array or object opened deeper than
// MaxDepth is a nesting fault where it opens, whatever follows. So the scanner never
// recurses deeper than MaxDepth, whatever the text, and a hostile body costs one pass.
//
// text must be valid UTF-8. ok is false only for a text this scanner accepts (JSON that
// nests no deeper than the limit).
func jsonSyntaxError(text []byte) (pos int, msg string, ok bool) {
	p := &jsonScanner{s: text}
	defer func() {
		if r := recover(); r != nil {
			f, isFault := r.(jsonFault)
			if !isFault {
				panic(r)
			}
			// Offsets are in characters, as Python counts them.
			pos, msg, ok = utf8.RuneCount(text[:f.pos]), f.msg, true
		}
	}()
	end := p.value(p.skip(0))
	if end = p.skip(end); end != len(p.s) {
		p.fail("Extra data", end)
	}
	return 0, "", false
}

// nestingMessage is the json_invalid reason of a body nested deeper than MaxDepth.
var nestingMessage = fmt.Sprintf("Nesting deeper than %d levels", MaxDepth)

type jsonFault struct {
	pos int // byte offset
	msg string
}

type jsonScanner struct {
	s     []byte
	depth int // arrays and objects open around the current position
}

func (p *jsonScanner) fail(msg string, pos int) { panic(jsonFault{pos, msg}) }

// at returns the byte at i, or -1 past the end. Every byte the scanner decides on is
// ASCII; the bytes of other characters only ever appear inside strings or as faults.
func (p *jsonScanner) at(i int) int {
	if i < len(p.s) {
		return int(p.s[i])
	}
	return -1
}

func (p *jsonScanner) skip(i int) int {
	for i < len(p.s) && strings.IndexByte(" \t\n\r", p.s[i]) >= 0 {
		i++
	}
	return i
}

// value scans the value starting at i and returns the index after it.
func (p *jsonScanner) value(i int) int {
	switch p.at(i) {
	case '"':
		return p.str(i + 1)
	case '{', '[':
		if p.depth++; p.depth > MaxDepth {
			p.fail(nestingMessage, i)
		}
		defer func() { p.depth-- }()
		if p.at(i) == '{' {
			return p.object(i + 1)
		}
		return p.array(i + 1)
	}
	for _, lit := range []string{"null", "true", "false"} {
		if p.literalAt(i, lit) {
			return i + len(lit)
		}
	}
	if end := p.number(i); end > i {
		return end
	}
	p.fail("Expecting value", i) // NaN and Infinity included
	return 0
}

func (p *jsonScanner) literalAt(i int, lit string) bool {
	return i+len(lit) <= len(p.s) && string(p.s[i:i+len(lit)]) == lit
}

// number returns the end of the number starting at i (i when there is none), matching
// Python's -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)? : "1." is the number 1 followed by a stray
// ".", not a malformed number.
func (p *jsonScanner) number(i int) int {
	digit := func(j int) bool { return p.at(j) >= '0' && p.at(j) <= '9' }
	digits := func(j int) int {
		for digit(j) {
			j++
		}
		return j
	}
	j := i
	if p.at(j) == '-' {
		j++
	}
	switch {
	case p.at(j) == '0':
		j++
	case digit(j):
		j = digits(j)
	default:
		return i
	}
	if p.at(j) == '.' && digit(j+1) {
		j = digits(j + 1)
	}
	if e := p.at(j); e == 'e' || e == 'E' {
		k := j + 1
		if p.at(k) == '+' || p.at(k) == '-' {
			k++
		}
		if digit(k) {
			j = digits(k)
		}
	}
	return j
}

// str scans a string whose opening quote is at i-1.
func (p *jsonScanner) str(i int) int {
	begin := i - 1
	for {
		c := p.at(i)
		switch {
		case c == -1:
			p.fail("Unterminated string starting at", begin)
		case c == '"':
			return i + 1
		case c < 0x20:
			p.fail("Invalid control character at", i)
		case c == '\\':
			esc := p.at(i + 1)
			switch {
			case esc == -1:
				p.fail("Unterminated string starting at", begin)
			case esc == 'u':
				// CPython wants the four digits and one character more.
				if i+6 >= len(p.s) {
					p.fail("Invalid \\uXXXX escape", i+1)
				}
				for _, h := range p.s[i+2 : i+6] {
					if strings.IndexByte("0123456789abcdefABCDEF", h) < 0 {
						p.fail("Invalid \\uXXXX escape", i+1)
					}
				}
				i += 6
			case esc == '"' || esc == '\\' || esc == '/' || esc == 'b' || esc == 'f' || esc == 'n' || esc == 'r' || esc == 't':
				i += 2
			default:
				p.fail("Invalid \\escape", i)
			}
		default:
			i++
		}
	}
}

// object scans an object whose opening brace is at i-1.
func (p *jsonScanner) object(i int) int {
	i = p.skip(i)
	if p.at(i) == '}' {
		return i + 1
	}
	for {
		if p.at(i) != '"' {
			p.fail("Expecting property name enclosed in double quotes", i)
		}
		i = p.skip(p.str(i + 1))
		if p.at(i) != ':' {
			p.fail("Expecting ':' delimiter", i)
		}
		i = p.skip(p.value(p.skip(i + 1)))
		if p.at(i) == '}' {
			return i + 1
		}
		if p.at(i) != ',' {
			p.fail("Expecting ',' delimiter", i)
		}
		comma := i
		if i = p.skip(i + 1); p.at(i) == '}' {
			p.fail("Illegal trailing comma before end of object", comma)
		}
	}
}

// array scans an array whose opening bracket is at i-1.
func (p *jsonScanner) array(i int) int {
	i = p.skip(i)
	if p.at(i) == ']' {
		return i + 1
	}
	for {
		i = p.skip(p.value(i))
		if p.at(i) == ']' {
			return i + 1
		}
		if p.at(i) != ',' {
			p.fail("Expecting ',' delimiter", i)
		}
		comma := i
		if i = p.skip(i + 1); p.at(i) == ']' {
			p.fail("Illegal trailing comma before end of array", comma)
		}
	}
}

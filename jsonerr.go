package payments

import "strings"

// pythonJSONError finds the first fault of a malformed JSON text the way Python's json
// module (and so FastAPI) reports it: the character offset where the offending token
// starts, and the decoder's message. Go's decoder stops some characters later (after a
// bad literal, at the end of an unterminated string), so its offsets cannot be used as
// they are. ok is false when Python would accept the text (NaN and Infinity, which Go
// refuses).
func pythonJSONError(text string) (pos int, msg string, ok bool) {
	p := &pyScanner{s: []rune(text)}
	defer func() {
		if r := recover(); r != nil {
			f, isFault := r.(pyFault)
			if !isFault {
				panic(r)
			}
			pos, msg, ok = f.pos, f.msg, true
		}
	}()
	end := p.value(p.skip(0))
	if end = p.skip(end); end != len(p.s) {
		p.fail("Extra data", end)
	}
	return 0, "", false
}

type pyFault struct {
	pos int
	msg string
}

type pyScanner struct{ s []rune }

func (p *pyScanner) fail(msg string, pos int) { panic(pyFault{pos, msg}) }

func (p *pyScanner) at(i int) rune {
	if i < len(p.s) {
		return p.s[i]
	}
	return -1
}

func (p *pyScanner) skip(i int) int {
	for i < len(p.s) && strings.ContainsRune(" \t\n\r", p.s[i]) {
		i++
	}
	return i
}

// value scans the value starting at i and returns the index after it.
func (p *pyScanner) value(i int) int {
	switch p.at(i) {
	case '"':
		return p.str(i + 1)
	case '{':
		return p.object(i + 1)
	case '[':
		return p.array(i + 1)
	}
	for _, lit := range []string{"null", "true", "false", "NaN", "Infinity", "-Infinity"} {
		if p.literalAt(i, lit) {
			return i + len(lit)
		}
	}
	if end := p.number(i); end > i {
		return end
	}
	p.fail("Expecting value", i)
	return 0
}

func (p *pyScanner) literalAt(i int, lit string) bool {
	for j, r := range lit {
		if p.at(i+j) != r {
			return false
		}
	}
	return true
}

// number returns the end of the number starting at i (i when there is none), matching
// Python's -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)? : "1." is the number 1 followed by a stray
// ".", not a malformed number.
func (p *pyScanner) number(i int) int {
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
func (p *pyScanner) str(i int) int {
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
				if i+6 >= len(p.s) {
					p.fail("Invalid \\uXXXX escape", i+1)
				}
				for _, h := range p.s[i+2 : i+6] {
					if !strings.ContainsRune("0123456789abcdefABCDEF", h) {
						p.fail("Invalid \\uXXXX escape", i+1)
					}
				}
				i += 6
			case strings.ContainsRune(`"\/bfnrt`, esc):
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
func (p *pyScanner) object(i int) int {
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
func (p *pyScanner) array(i int) int {
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

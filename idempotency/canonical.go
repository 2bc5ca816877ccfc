package idempotency

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Errors of CanonicalJSON beyond plain syntax errors. Each one rejects a
// document that encoding/json would accept but whose meaning is ambiguous,
// because two requests that differ must never share a fingerprint.
var (
	// ErrDuplicateKey: an object names a member twice (RFC 8259 leaves the
	// meaning open; encoding/json keeps the last, others the first).
	ErrDuplicateKey = errors.New("duplicate object key")
	// ErrInvalidUTF8: a string holds invalid UTF-8 or a lone surrogate
	// escape, which decoders silently turn into U+FFFD.
	ErrInvalidUTF8 = errors.New("invalid UTF-8 or lone surrogate in string")
	// ErrTooDeep: nesting deeper than maxDepth.
	ErrTooDeep = errors.New("JSON nested too deeply")
	// ErrNumberRange: an exponent too large to normalise.
	ErrNumberRange = errors.New("number exponent out of range")
)

// maxDepth bounds recursion; real request bodies nest a handful of levels.
const maxDepth = 512

// maxExponentDigits bounds the exponent of a number so normalisation
// arithmetic cannot overflow (|exponent| < 10^15).
const maxExponentDigits = 15

// CanonicalJSON returns the canonical form of a JSON document: object
// members sorted by key (UTF-8 byte order), no insignificant whitespace,
// strings re-escaped one way, and numbers normalised so that 1, 1.0, 1e0
// and 10e-1 are the same (decimal, not float64: 0.1 and
// 0.10000000000000001 stay different). Integers of up to 21 digits are
// written plainly, every other number as d[.ddd]e<exp>. The canonical form
// is valid JSON and canonical itself.
//
// It fails on invalid JSON, duplicate keys, invalid UTF-8, lone surrogates,
// nesting deeper than 512 and exponents beyond 10^15.
func CanonicalJSON(b []byte) ([]byte, error) {
	p := &parser{in: b}
	var out bytes.Buffer
	out.Grow(len(b))
	p.ws()
	if err := p.value(&out, 0); err != nil {
		return nil, err
	}
	p.ws()
	if p.pos != len(p.in) {
		return nil, p.fail("trailing data after the JSON value")
	}
	return out.Bytes(), nil
}

type parser struct {
	in  []byte
	pos int
}

func (p *parser) fail(msg string) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", p.pos, msg)
}

func (p *parser) ws() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(out *bytes.Buffer, depth int) error {
	if depth > maxDepth {
		return ErrTooDeep
	}
	if p.pos >= len(p.in) {
		return p.fail("unexpected end of input")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object(out, depth)
	case c == '[':
		return p.array(out, depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return err
		}
		writeString(out, s)
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(out)
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.in[p.pos:], []byte(lit)) {
				p.pos += len(lit)
				out.WriteString(lit)
				return nil
			}
		}
		return p.fail("unexpected character")
	}
}

type member struct {
	key string
	val []byte
}

func (p *parser) object(out *bytes.Buffer, depth int) error {
	p.pos++ // '{'
	var members []member
	p.ws()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		out.WriteString("{}")
		return nil
	}
	for {
		p.ws()
		if p.pos >= len(p.in) || p.in[p.pos] != '"' {
			return p.fail("expected object key")
		}
		key, err := p.str()
		if err != nil {
			return err
		}
		p.ws()
		if p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return p.fail("expected ':'")
		}
		p.pos++
		p.ws()
		var val bytes.Buffer
		if err := p.value(&val, depth+1); err != nil {
			return err
		}
		members = append(members, member{key, val.Bytes()})
		p.ws()
		if p.pos >= len(p.in) {
			return p.fail("unterminated object")
		}
		if p.in[p.pos] == '}' {
			p.pos++
			break
		}
		if p.in[p.pos] != ',' {
			return p.fail("expected ',' or '}'")
		}
		p.pos++
	}
	sort.Slice(members, func(i, j int) bool { return members[i].key < members[j].key })
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			if members[i-1].key == m.key {
				return fmt.Errorf("%w: %q", ErrDuplicateKey, m.key)
			}
			out.WriteByte(',')
		}
		writeString(out, m.key)
		out.WriteByte(':')
		out.Write(m.val)
	}
	out.WriteByte('}')
	return nil
}

func (p *parser) array(out *bytes.Buffer, depth int) error {
	p.pos++ // '['
	out.WriteByte('[')
	p.ws()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		out.WriteByte(']')
		return nil
	}
	for first := true; ; first = false {
		if !first {
			out.WriteByte(',')
		}
		p.ws()
		if err := p.value(out, depth+1); err != nil {
			return err
		}
		p.ws()
		if p.pos >= len(p.in) {
			return p.fail("unterminated array")
		}
		if p.in[p.pos] == ']' {
			p.pos++
			out.WriteByte(']')
			return nil
		}
		if p.in[p.pos] != ',' {
			return p.fail("expected ',' or ']'")
		}
		p.pos++
	}
}

// str decodes the string starting at p.pos (a '"').
func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	var b []byte
	for {
		if p.pos >= len(p.in) {
			return "", p.fail("unterminated string")
		}
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(b), nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b = utf8.AppendRune(b, r)
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.in[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", ErrInvalidUTF8
			}
			b = append(b, p.in[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
}

// escape decodes one backslash escape, joining UTF-16 surrogate pairs.
func (p *parser) escape() (rune, error) {
	if p.pos+1 >= len(p.in) {
		return 0, p.fail("unterminated escape")
	}
	c := p.in[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
	default:
		return 0, p.fail("invalid escape")
	}
	r, err := p.hex4()
	if err != nil {
		return 0, err
	}
	if !utf16.IsSurrogate(r) {
		return r, nil
	}
	// A high surrogate must be followed by an escaped low surrogate.
	if r >= 0xDC00 || p.pos+1 >= len(p.in) || p.in[p.pos] != '\\' || p.in[p.pos+1] != 'u' {
		return 0, ErrInvalidUTF8
	}
	p.pos += 2
	r2, err := p.hex4()
	if err != nil {
		return 0, err
	}
	full := utf16.DecodeRune(r, r2)
	if full == utf8.RuneError {
		return 0, ErrInvalidUTF8
	}
	return full, nil
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.in) {
		return 0, p.fail("short \\u escape")
	}
	v, err := strconv.ParseUint(string(p.in[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, p.fail("invalid \\u escape")
	}
	p.pos += 4
	return rune(v), nil
}

// writeString writes s as a JSON string with the one escaping CanonicalJSON
// uses: \" \\ \b \f \n \r \t, \u00xx for other control characters, every
// other character literally.
func writeString(out *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	out.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			out.WriteByte('\\')
			out.WriteByte(c)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if c < 0x20 {
				out.WriteString(`\u00`)
				out.WriteByte(hexDigits[c>>4])
				out.WriteByte(hexDigits[c&0xF])
			} else {
				out.WriteByte(c)
			}
		}
	}
	out.WriteByte('"')
}

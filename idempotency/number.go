package idempotency

import (
	"bytes"
	"strconv"
	"strings"
)

// number parses a JSON number at p.pos and writes its canonical form.
//
// The value is treated as an exact decimal D × 10^E (D without leading or
// trailing zeros), never as a float64: rounding would let two different
// amounts share a fingerprint.
func (p *parser) number(out *bytes.Buffer) error {
	start := p.pos
	neg := false
	if p.in[p.pos] == '-' {
		neg = true
		p.pos++
	}
	intStart := p.pos
	if p.pos >= len(p.in) || !isDigit(p.in[p.pos]) {
		return p.fail("invalid number")
	}
	if p.in[p.pos] == '0' {
		p.pos++
	} else {
		p.skipDigits()
	}
	intPart := string(p.in[intStart:p.pos])
	frac := ""
	if p.pos < len(p.in) && p.in[p.pos] == '.' {
		p.pos++
		fs := p.pos
		if p.skipDigits() == 0 {
			return p.fail("digit expected after decimal point")
		}
		frac = string(p.in[fs:p.pos])
	}
	var exp int64
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		p.pos++
		expNeg := false
		if p.pos < len(p.in) && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
			expNeg = p.in[p.pos] == '-'
			p.pos++
		}
		es := p.pos
		if p.skipDigits() == 0 {
			return p.fail("digit expected in exponent")
		}
		digits := strings.TrimLeft(string(p.in[es:p.pos]), "0")
		if len(digits) > maxExponentDigits {
			p.pos = start
			return ErrNumberRange
		}
		if digits != "" {
			exp, _ = strconv.ParseInt(digits, 10, 64) // ≤ 15 digits: cannot fail
		}
		if expNeg {
			exp = -exp
		}
	}
	writeNumber(out, neg, intPart+frac, exp-int64(len(frac)))
	return nil
}

func (p *parser) skipDigits() int {
	n := 0
	for p.pos < len(p.in) && isDigit(p.in[p.pos]) {
		p.pos++
		n++
	}
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// writeNumber writes sign × digits × 10^exp canonically: zero as "0" (so
// -0 == 0), integers of at most 21 digits plainly, everything else as
// d[.ddd]e<exp> with one digit before the point.
func writeNumber(out *bytes.Buffer, neg bool, digits string, exp int64) {
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		out.WriteByte('0')
		return
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	digits = trimmed
	if neg {
		out.WriteByte('-')
	}
	if exp >= 0 && int64(len(digits))+exp <= 21 {
		out.WriteString(digits)
		out.WriteString(strings.Repeat("0", int(exp)))
		return
	}
	out.WriteByte(digits[0])
	if len(digits) > 1 {
		out.WriteByte('.')
		out.WriteString(digits[1:])
	}
	out.WriteByte('e')
	out.WriteString(strconv.FormatInt(exp+int64(len(digits))-1, 10))
}

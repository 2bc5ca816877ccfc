package intent

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// token is one word or number of a message after folding.
type token struct {
	// s is lower case with umlauts spelled out (ä→ae, ö→oe, ü→ue, ß→ss),
	// so "Ölwechsel" and "Oelwechsel" are the same word.
	s string
	// dot records a trailing '.', which marks German ordinals ("17.") and
	// abbreviations ("Di.").
	dot bool
	// brk records a clause boundary (",", ";", "!", "?", newline) after the
	// token; negations are scoped to clauses.
	brk bool
}

// folder spells out umlauts (precomposed and decomposed) and drops
// apostrophes ("o'clock", "doesn't") so both keyboards and transliterations
// meet in one spelling.
var folder = strings.NewReplacer(
	"a\u0308", "ae", "o\u0308", "oe", "u\u0308", "ue",
	"ä", "ae", "ö", "oe", "ü", "ue", "ß", "ss",
	"'", "", "’", "", "‘", "", "`", "", "´", "",
)

// keepWhole are chunks with letters that must not be split at '.' or ':'
// ("10:30am", "14h30", "p.m", "17th").
var keepWhole = regexp.MustCompile(`^\d{1,2}(?:[:.h]\d{2})?(?:uhr|h|am|pm|a\.m|p\.m)$|^\d{1,2}(?:st|nd|rd|th)$|^[ap]\.m$`)

// isoDateTime is an RFC 3339 style local date-time without zone.
var isoDateTime = regexp.MustCompile(`^(\d{4}-\d{1,2}-\d{1,2})t(\d{1,2}:\d{2})(?::\d{2})?$`)

// tokenize folds and splits text. Letters, digits and the separators that
// live inside dates and times ('.', ':', '-') form chunks; everything else
// separates.
func tokenize(text string) []token {
	s := folder.Replace(strings.ToLower(strings.ToValidUTF8(text, " ")))
	var out []token
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == ':' || r == '-' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = appendChunk(out, s[start:i])
			start = -1
		}
		switch r {
		case ',', ';', '!', '?', '\n':
			if len(out) > 0 {
				out[len(out)-1].brk = true
			}
		}
	}
	if start >= 0 {
		out = appendChunk(out, s[start:])
	}
	return out
}

// appendChunk trims a chunk's outer separators and splits words joined by
// them ("Dienstag-Termin"), but keeps dates and times ("17.08.2027",
// "2026-12-01", "14:30") whole.
func appendChunk(out []token, c string) []token {
	c = strings.TrimLeft(c, ".:-")
	dot := false
	for c != "" {
		last := c[len(c)-1]
		if last != '.' && last != ':' && last != '-' {
			break
		}
		if last == '.' {
			dot = true
		}
		c = c[:len(c)-1]
	}
	if c == "" {
		return out
	}
	if len(c) > 10 && c[4] == '-' {
		if m := isoDateTime.FindStringSubmatch(c); m != nil {
			// "2026-12-01T14:00" as sent by forms and APIs: a date and a time.
			return append(out, token{s: m[1]}, token{s: m[2]})
		}
	}
	if !hasLetter(c) || isTimeWord(c) {
		return append(out, token{s: c, dot: dot})
	}
	first := len(out)
	partStart := 0
	for i := 0; i < len(c); i++ {
		if c[i] != '.' && c[i] != ':' && c[i] != '-' {
			continue
		}
		if i > partStart {
			out = append(out, token{s: c[partStart:i], dot: c[i] == '.'})
		}
		partStart = i + 1
	}
	if partStart < len(c) {
		out = append(out, token{s: c[partStart:]})
	}
	if len(out) > first {
		out[len(out)-1].dot = dot
	}
	return out
}

// isTimeWord tests keepWhole, skipping the regexp for plain words (most
// tokens), which keeps long messages cheap.
func isTimeWord(s string) bool {
	if s == "" || ((s[0] < '0' || s[0] > '9') && s[0] != 'a' && s[0] != 'p') {
		return false
	}
	return keepWhole.MatchString(s)
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// isDigits reports a non-empty ASCII digit string; unicode.IsDigit would
// also accept digits strconv cannot parse.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// atoi parses a short ASCII number; -1 when it is not one, so callers need
// no error handling for the common "not a number" case.
func atoi(s string) int {
	if !isDigits(s) || len(s) > 4 {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

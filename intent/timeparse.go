package intent

import "regexp"

type meridiem int

const (
	merNone meridiem = iota
	merAM
	merPM
)

// timeCand is one time of day mentioned in a message, before the
// afternoon rule is applied.
type timeCand struct {
	h, m int
	mer  meridiem
	// fixed: the 24-hour clock is evident ("14 Uhr", "07:30", midnight), so
	// the afternoon rule does not apply.
	fixed bool
	// word: from "halb"/"viertel"/"quarter", where hour 0 means 12 ("halb eins").
	word bool
	// hasMin: minutes were given, so none are read after "Uhr".
	hasMin bool
	// noon: "mittags"/"noon" is a time only when nothing more exact is said.
	noon bool
	// ranged: preceded by "ab", "bis", "after", ... — a bound, not a time.
	ranged     bool
	start, end int
}

// timeTok matches a time written with digits: "14", "14:30", "14.30",
// "14h", "14h30", "14uhr", "2pm", "10:30am", "2.30p.m".
var timeTok = regexp.MustCompile(`^(\d{1,2})(?:([:.h])(\d{2}))?(uhr|h|am|pm|a\.m|p\.m)?$`)

var (
	// timePreps make a bare number a time ("um zwei", "at 2").
	timePreps = wordSet("um", "at", "gegen", "around", "ca", "circa", "zirka", "etwa")
	// rangeWords make a following time a bound; the first six also make a
	// bare number a time ("ab 14", "zwischen 14 und 15 Uhr").
	rangeWords    = wordSet("ab", "bis", "zwischen", "from", "until", "till", "between", "after", "before", "nach", "vor", "fruehestens", "spaetestens", "earliest", "latest", "by")
	rangeContexts = wordSet("ab", "bis", "zwischen", "from", "until", "till", "between", "after", "before")
	clockWords    = wordSet("uhr", "h", "oclock")
	// germanAmFollowers show that "am" after a number is the German
	// preposition ("um 10 am Dienstag"), not ante meridiem.
	germanAmFollowers = wordSet("morgen", "uebermorgen", "naechsten", "kommenden", "vormittag", "nachmittag",
		"abend", "mittag", "wochenende", "selben", "gleichen", "ersten", "dem", "den", "montag", "dienstag",
		"mittwoch", "donnerstag", "freitag", "samstag", "sonnabend", "sonntag", "mo", "di", "mi", "do", "fr", "sa", "so")
	amWords   = wordSet("morgens", "frueh", "vormittag", "vormittags", "morning", "fruehmorgens")
	pmWords   = wordSet("nachmittag", "nachmittags", "abend", "abends", "afternoon", "evening", "tonight")
	noonWords = wordSet("mittag", "mittags", "noon", "midday", "mittagszeit")
)

// scanQualifiers records whether the message says morning or afternoon;
// the afternoon rule needs it.
func (p *parser) scanQualifiers() {
	for i, t := range p.toks {
		switch {
		case amWords[t.s]:
			p.qAM = true
		case pmWords[t.s]:
			p.qPM = true
		case t.s == "morgen" && p.morgenRole(i) == roleMorning:
			p.qAM = true
		}
	}
}

// parseTimes finds every time of day and marks its tokens used.
func (p *parser) parseTimes() []timeCand {
	var out []timeCand
	for i := 0; i < len(p.toks); i++ {
		if p.used[i] {
			continue
		}
		c, ok := p.timeAt(i)
		if !ok {
			continue
		}
		c = p.suffixes(c)
		c.ranged = c.ranged || rangeWords[p.word(c.start-1)]
		for k := c.start; k < c.end; k++ {
			p.used[k] = true
		}
		out = append(out, c)
		i = c.end - 1
	}
	return out
}

// timeAt recognises a time starting at token i.
func (p *parser) timeAt(i int) (timeCand, bool) {
	if c, ok := p.wordTime(i); ok {
		return c, true
	}
	s := p.toks[i].s
	switch {
	case noonWords[s]:
		return timeCand{h: 12, noon: true, fixed: true, start: i, end: i + 1}, true
	case s == "midnight" || s == "mitternacht":
		return timeCand{h: 0, fixed: true, start: i, end: i + 1}, true
	}
	if mt := timeTok.FindStringSubmatch(s); mt != nil {
		return p.digitTime(i, mt)
	}
	return p.numberWordTime(i)
}

// wordTime handles "halb drei", "viertel nach zwei", "viertel vor drei",
// "dreiviertel drei", "quarter past two", "half past two", "zehn nach zwei"
// and "ten to three".
func (p *parser) wordTime(i int) (timeCand, bool) {
	s, next := p.word(i), p.word(i+1)
	hourAfter := func(j int) (int, int) {
		h, k := p.numberAt(j)
		if h < 1 || h > 24 {
			return -1, 0
		}
		return h, k
	}
	mk := func(h, m, end int) (timeCand, bool) {
		return timeCand{h: h, m: m, word: true, start: i, end: end}, true
	}
	switch {
	case s == "halb":
		if h, k := hourAfter(i + 1); k > 0 {
			return mk(h-1, 30, i+1+k)
		}
	case s == "dreiviertel":
		if h, k := hourAfter(i + 1); k > 0 {
			return mk(h-1, 45, i+1+k)
		}
	case s == "half" && next == "past":
		if h, k := hourAfter(i + 2); k > 0 {
			return mk(h, 30, i+2+k)
		}
	}
	minutes := -1
	if s == "viertel" || s == "quarter" {
		minutes = 15
	} else if n, k := p.numberAt(i); k == 1 && !p.toks[i].dot && (n == 5 || n == 10 || n == 20 || n == 25) && !rangeContexts[p.word(i-1)] {
		minutes = n
	}
	if minutes < 0 {
		return timeCand{}, false
	}
	switch next {
	case "nach", "past", "after":
		if h, k := hourAfter(i + 2); k > 0 {
			return mk(h, minutes, i+2+k)
		}
	case "vor", "to", "before":
		// "ten to three" only with words: "10 to 12" is a range.
		if next != "vor" && isDigits(s) {
			return timeCand{}, false
		}
		if h, k := hourAfter(i + 2); k > 0 {
			return mk(h-1, 60-minutes, i+2+k)
		}
	}
	return timeCand{}, false
}

// digitTime handles times written with digits. A dotted pair is a date
// unless the context says time: "17.08." and "am 3.12" are dates, "14.30",
// "um 9.30" and "9.45 Uhr" are times.
func (p *parser) digitTime(i int, mt []string) (timeCand, bool) {
	c := timeCand{h: atoi(mt[1]), start: i, end: i + 1}
	sep, mm, suf := mt[2], mt[3], mt[4]
	if mm != "" {
		c.m, c.hasMin = atoi(mm), true
	}
	prev := p.word(i - 1)
	marked := suf != "" || sep == ":" || sep == "h" || clockWords[p.word(i+1)] || p.meridiemAt(i+1) != merNone
	context := timePreps[prev] || rangeContexts[prev]
	switch sep {
	case ".":
		if p.toks[i].dot && suf == "" && !clockWords[p.word(i+1)] {
			return timeCand{}, false
		}
		if !marked && !context && (datePreps[prev] || (c.m >= 1 && c.m <= 12)) {
			return timeCand{}, false
		}
	case "":
		if !marked && !context {
			return timeCand{}, false
		}
		if _, isMonth := months[p.word(i+1)]; isMonth {
			return timeCand{}, false
		}
	}
	c.fixed = (len(mt[1]) == 2 && mt[1][0] == '0') || c.h >= 13 || c.h == 0
	switch suf {
	case "am", "a.m":
		c.mer = merAM
	case "pm", "p.m":
		c.mer = merPM
	}
	if mm == "" && (suf == "uhr" || suf == "h") {
		c.end, c.m = p.minutesAfter(i + 1)
		c.hasMin = true
	}
	return c, true
}

// numberWordTime handles "um zwei", "at two", "vierzehn Uhr dreissig",
// "ein Uhr", "two pm", "at two thirty".
func (p *parser) numberWordTime(i int) (timeCand, bool) {
	n, k := p.numberAt(i)
	if p.word(i) == "ein" && p.word(i+1) == "uhr" {
		n, k = 1, 1
	}
	if k == 0 || isDigits(p.word(i)) || n > 24 {
		return timeCand{}, false
	}
	j := i + k
	prev := p.word(i - 1)
	if !clockWords[p.word(j)] && p.meridiemAt(j) == merNone && !timePreps[prev] && !rangeContexts[prev] {
		return timeCand{}, false
	}
	c := timeCand{h: n, fixed: n >= 13 || n == 0, start: i, end: j}
	if _, en := englishNumbers[p.word(i)]; en && !clockWords[p.word(j)] {
		if m, mk := p.numberAt(j); mk > 0 && m >= 10 && m <= 59 && !isDigits(p.word(j)) {
			c.m, c.end, c.hasMin = m, j+mk, true
		}
	}
	return c, true
}

// suffixes consumes what may follow a time: "Uhr", "o'clock", minutes
// after "Uhr" ("14 Uhr 30") and a meridiem ("2 pm", "10 am").
func (p *parser) suffixes(c timeCand) timeCand {
	if c.end < len(p.toks) && !p.used[c.end] && clockWords[p.word(c.end)] {
		c.end++
		if !c.hasMin && !c.word && p.word(c.end-1) == "uhr" {
			c.end, c.m = p.minutesAfter(c.end)
			c.hasMin = true
		}
	}
	if mer := p.meridiemAt(c.end); mer != merNone && c.mer == merNone {
		c.mer = mer
		c.end++
	}
	return c
}

// minutesAfter reads minutes spoken after "Uhr" ("14 Uhr 30", "vierzehn
// Uhr dreissig") at j; it returns the end of the time and the minutes (0
// when none follow).
func (p *parser) minutesAfter(j int) (end, minutes int) {
	n, k := p.numberAt(j)
	if k == 0 || n > 59 {
		return j, 0
	}
	if w := p.word(j); isDigits(w) && len(w) != 2 {
		return j, 0
	}
	if _, isMonth := months[p.word(j+k)]; isMonth || p.toks[j].dot {
		return j, 0
	}
	return j + k, n
}

// meridiemAt recognises "am"/"pm" at token j. "am" followed by a day word
// is the German preposition: "um 10 am Dienstag".
func (p *parser) meridiemAt(j int) meridiem {
	if j >= len(p.toks) || p.used[j] {
		return merNone
	}
	switch p.toks[j].s {
	case "pm", "p.m":
		return merPM
	case "a.m":
		return merAM
	case "am":
		next := p.word(j + 1)
		if germanAmFollowers[next] || (next != "" && next[0] >= '0' && next[0] <= '9') {
			return merNone
		}
		return merAM
	}
	return merNone
}

// numberAt reads a number of at most two digits or a German or English
// number word ("forty five" takes two tokens) at j.
func (p *parser) numberAt(j int) (int, int) {
	if j < 0 || j >= len(p.toks) || p.used[j] {
		return -1, 0
	}
	s := p.toks[j].s
	if len(s) <= 2 && isDigits(s) {
		return atoi(s), 1
	}
	if n, ok := germanNumbers[s]; ok {
		return n, 1
	}
	if n, ok := englishNumbers[s]; ok {
		if n >= 20 && j+1 < len(p.toks) && !p.used[j+1] {
			if u, ok := englishNumbers[p.toks[j+1].s]; ok && u < 10 {
				return n + u, 2
			}
		}
		return n, 1
	}
	return -1, 0
}

// clock converts a candidate to a wall clock. Without am/pm or a 24-hour
// form, hours 1..7 are afternoon (the workshop opens at 8), and
// "nachmittags"/"abends" move any hour below 12 to the afternoon. ok is
// false when the time does not exist or morning and afternoon are both said.
func (p *parser) clock(c timeCand) (h, m int, ok bool) {
	h, m = c.h, c.m
	if c.word && h == 0 {
		h = 12
	}
	if m > 59 || h > 23 {
		return 0, 0, false
	}
	switch c.mer {
	case merPM:
		if h < 1 || h > 12 {
			return 0, 0, false
		}
		if h < 12 {
			h += 12
		}
	case merAM:
		if h < 1 || h > 12 {
			return 0, 0, false
		}
		if h == 12 {
			h = 0
		}
	default:
		if c.fixed {
			break
		}
		switch {
		case p.qAM && p.qPM && h < 12:
			return 0, 0, false
		case p.qPM && h < 12:
			h += 12
		case !p.qAM && h >= 1 && h <= 7:
			h += 12
		}
	}
	return h, m, true
}

package intent

import (
	"regexp"
	"time"
)

// civil is a calendar day without a clock or zone; arithmetic runs at UTC
// noon so daylight-saving changes never shift the day.
type civil struct {
	y int
	m time.Month
	d int
}

func civilOf(t time.Time) civil { return civil{t.Year(), t.Month(), t.Day()} }

func (c civil) noon() time.Time { return time.Date(c.y, c.m, c.d, 12, 0, 0, 0, time.UTC) }
func (c civil) add(days int) civil {
	return civilOf(time.Date(c.y, c.m, c.d+days, 12, 0, 0, 0, time.UTC))
}
func (c civil) weekday() time.Weekday { return c.noon().Weekday() }
func (c civil) before(o civil) bool   { return c.noon().Before(o.noon()) }
func (c civil) at(h, m int, loc *time.Location) time.Time {
	return time.Date(c.y, c.m, c.d, h, m, 0, 0, loc)
}

// validCivil rejects what time.Date would silently normalise ("31.02.").
func validCivil(y int, m time.Month, d int) bool {
	return m >= 1 && m <= 12 && d >= 1 && civilOf(time.Date(y, m, d, 12, 0, 0, 0, time.UTC)) == civil{y, m, d}
}

// dateCand is one day mentioned in a message.
type dateCand struct {
	// opts has one day, or two (today, in a week) for a bare weekday that
	// names today: which one depends on whether the time is still ahead.
	opts []civil
	// weekday marks candidates from weekday words; they are checked against
	// explicit dates instead of competing with them.
	weekday    bool
	wd         time.Weekday
	invalid    bool
	start, end int
}

var (
	isoDate = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})$`)
	dmyDate = regexp.MustCompile(`^(\d{1,2})\.(\d{1,2})(?:\.(\d{2}|\d{4}))?$`)
	dayTok  = regexp.MustCompile(`^(\d{1,2})(st|nd|rd|th)?$`)
	// datePreps introduce a day: "am 3.12", "am 17.", "Freitag, der 13.",
	// "on the 17th".
	datePreps    = wordSet("am", "den", "dem", "der", "zum", "vom", "on", "the")
	nextMods     = wordSet("naechsten", "naechste", "naechster", "naechstes", "kommenden", "kommende", "kommender", "next", "coming")
	overNextMods = wordSet("uebernaechsten", "uebernaechste", "uebernaechster")
	dayUnits     = wordSet("tagen", "tage", "tag", "days", "day")
	partsOfDay   = wordSet("morning", "afternoon", "evening")
)

// parseDates finds every day mentioned and marks its tokens used.
func (p *parser) parseDates() []dateCand {
	weeks := p.weekOffset()
	var out []dateCand
	for i := 0; i < len(p.toks); i++ {
		if p.used[i] {
			continue
		}
		c, ok := p.dateAt(i, weeks)
		if !ok {
			continue
		}
		for k := c.start; k < c.end; k++ {
			p.used[k] = true
		}
		out = append(out, c)
		i = c.end - 1
	}
	return out
}

// weekOffset is 1 for "nächste Woche"/"next week", 2 for "übernächste
// Woche", else 0; it places a weekday in that calendar week.
func (p *parser) weekOffset() int {
	for i, t := range p.toks {
		if t.s != "woche" && t.s != "week" {
			continue
		}
		switch prev := p.word(i - 1); {
		case nextMods[prev]:
			return 1
		case overNextMods[prev]:
			return 2
		}
	}
	return 0
}

func (p *parser) dateAt(i, weeks int) (dateCand, bool) {
	t := p.toks[i]
	if m := isoDate.FindStringSubmatch(t.s); m != nil {
		return p.explicit(atoi(m[1]), atoi(m[2]), atoi(m[3]), true, i, i+1), true
	}
	if m := dmyDate.FindStringSubmatch(t.s); m != nil {
		y, hasYear := atoi(m[3]), m[3] != ""
		if len(m[3]) == 2 {
			y += 2000
		}
		return p.explicit(y, atoi(m[2]), atoi(m[1]), hasYear, i, i+1), true
	}
	if m := dayTok.FindStringSubmatch(t.s); m != nil {
		return p.dayFirst(i, atoi(m[1]), m[2] != "")
	}
	if mon, ok := months[t.s]; ok {
		if m := dayTok.FindStringSubmatch(p.word(i + 1)); m != nil && !p.used[i+1] {
			y, end := p.yearAt(i + 2)
			return p.explicit(y, int(mon), atoi(m[1]), y != 0, i, end), true
		}
		return dateCand{}, false
	}
	if wd, ok := weekdayOf(t); ok {
		return p.weekdayCand(i, wd, weeks), true
	}
	return p.relative(i)
}

// dayFirst handles "17. August", "17 August", "17th of August" and a day
// alone ("am 17.", "the 17th").
func (p *parser) dayFirst(i, day int, suffix bool) (dateCand, bool) {
	j := i + 1
	if p.word(j) == "of" {
		j++
	}
	if mon, ok := months[p.word(j)]; ok && j < len(p.toks) && !p.used[j] {
		y, end := p.yearAt(j + 1)
		return p.explicit(y, int(mon), day, y != 0, i, end), true
	}
	if !(suffix || (p.toks[i].dot && datePreps[p.word(i-1)])) || clockWords[p.word(i+1)] {
		return dateCand{}, false
	}
	today := civilOf(p.now)
	for k := 0; k < 13; k++ {
		first := civil{today.y, today.m, 1}
		c := civilOf(time.Date(first.y, first.m+time.Month(k), 1, 12, 0, 0, 0, time.UTC))
		c.d = day
		if validCivil(c.y, c.m, c.d) && !c.before(today) {
			return dateCand{opts: []civil{c}, start: i, end: i + 1}, true
		}
	}
	return dateCand{invalid: true, start: i, end: i + 1}, true
}

// yearAt reads a four-digit year at j; it returns 0 and j when there is none.
func (p *parser) yearAt(j int) (int, int) {
	if w := p.word(j); len(w) == 4 && isDigits(w) && j < len(p.toks) && !p.used[j] {
		return atoi(w), j + 1
	}
	return 0, j
}

// explicit builds a written date. Without a year it is this year's, or
// next year's once this year's has passed; a year far from now is treated
// as a typo to ask about, not a booking in 1999.
func (p *parser) explicit(y, m, d int, hasYear bool, start, end int) dateCand {
	today := civilOf(p.now)
	if !hasYear {
		y = today.y
		if validCivil(y, time.Month(m), d) && (civil{y, time.Month(m), d}).before(today) {
			y++
		}
	}
	c := dateCand{opts: []civil{{y, time.Month(m), d}}, start: start, end: end}
	if !validCivil(y, time.Month(m), d) || y < today.y-1 || y > today.y+5 {
		c.invalid = true
	}
	return c
}

// weekdayCand resolves a weekday word with its modifier (see package doc).
func (p *parser) weekdayCand(i int, wd time.Weekday, weeks int) dateCand {
	today := civilOf(p.now)
	delta := (int(wd) - int(today.weekday()) + 7) % 7
	c := dateCand{weekday: true, wd: wd, start: i, end: i + 1}
	prev := p.word(i - 1)
	switch {
	case nextMods[prev] || overNextMods[prev]:
		if delta == 0 {
			delta = 7
		}
		if overNextMods[prev] {
			delta += 7
		}
		c.start = i - 1
		c.opts = []civil{today.add(delta)}
	case weeks > 0:
		monday := today.add(-((int(today.weekday()) + 6) % 7))
		c.opts = []civil{monday.add(7*weeks + (int(wd)+6)%7)}
	case delta == 0:
		c.opts = []civil{today, today.add(7)}
	default:
		c.opts = []civil{today.add(delta)}
	}
	return c
}

// relative handles heute, morgen, übermorgen, today, tomorrow, tonight,
// "day after tomorrow", "this morning" and "in 3 Tagen"/"in 3 days".
func (p *parser) relative(i int) (dateCand, bool) {
	today := civilOf(p.now)
	mk := func(days, end int) (dateCand, bool) {
		return dateCand{opts: []civil{today.add(days)}, start: i, end: end}, true
	}
	switch s := p.toks[i].s; {
	case s == "heute" || s == "today" || s == "tonight":
		return mk(0, i+1)
	case s == "this" && partsOfDay[p.word(i+1)]:
		return mk(0, i+1)
	case s == "morgen" && p.morgenRole(i) == roleTomorrow, s == "tomorrow":
		return mk(1, i+1)
	case s == "uebermorgen":
		return mk(2, i+1)
	case s == "day" && p.word(i+1) == "after" && p.word(i+2) == "tomorrow":
		return mk(2, i+3)
	case s == "in":
		if n, k := p.numberAt(i + 1); k > 0 && n >= 0 && n <= 60 && dayUnits[p.word(i+1+k)] {
			return mk(n, i+2+k)
		}
	}
	return dateCand{}, false
}

type morgenRole int

const (
	roleTomorrow morgenRole = iota
	roleMorning
	roleGreeting
)

// morgenRole tells "morgen" (tomorrow) from "heute Morgen"/"am Morgen"
// (morning) and "Guten Morgen" (a greeting, which must book nothing).
func (p *parser) morgenRole(i int) morgenRole {
	switch p.word(i - 1) {
	case "guten", "gute", "schoenen":
		return roleGreeting
	case "heute", "gestern", "am", "jeden", "diesen", "der", "den", "dem", "vom", "zum":
		return roleMorning
	}
	if i == 0 && len(p.toks) > 1 && p.toks[0].brk {
		return roleGreeting
	}
	return roleTomorrow
}

// resolveDate combines all days mentioned into one, or a question. clk is
// the resolved time (nil if none), needed for a weekday naming today.
func (p *parser) resolveDate(cands []dateCand, clk *[2]int) (civil, bool, string) {
	var pinned, weekdays []civil
	for _, c := range cands {
		if c.invalid {
			return civil{}, false, p.q.invalidDate()
		}
	}
	for _, c := range cands {
		if !c.weekday {
			pinned = appendDistinct(pinned, c.opts[0])
		}
	}
	if len(pinned) > 1 {
		return civil{}, false, p.q.whichDay(pinned[0], pinned[1])
	}
	if len(pinned) == 1 {
		for _, c := range cands {
			if c.weekday && c.wd != pinned[0].weekday() {
				return civil{}, false, p.q.weekdayMismatch(pinned[0], c.wd)
			}
		}
		return pinned[0], true, ""
	}
	for _, c := range cands {
		day := c.opts[0]
		if len(c.opts) == 2 {
			if clk == nil {
				return civil{}, false, p.q.whichDay(c.opts[0], c.opts[1])
			}
			if !day.at(clk[0], clk[1], p.loc).After(p.now) {
				day = c.opts[1]
			}
		}
		weekdays = appendDistinct(weekdays, day)
	}
	if len(weekdays) > 1 {
		return civil{}, false, p.q.whichDay(weekdays[0], weekdays[1])
	}
	if len(weekdays) == 0 {
		return civil{}, false, ""
	}
	return weekdays[0], true, ""
}

func appendDistinct(days []civil, d civil) []civil {
	for _, x := range days {
		if x == d {
			return days
		}
	}
	return append(days, d)
}

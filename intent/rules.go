package intent

import (
	"context"
	"errors"
	"time"
)

// parser holds one message while Rules reads it. Each sub-parser marks
// the tokens it consumed, so a word is read only once (a service name is
// never a date, "14.30" is never both a time and a date).
type parser struct {
	toks     []token
	used     []bool
	clause   []int
	negated  map[int]bool // clauses containing a negation
	negation bool         // any negation or "nein"/"no": no confirmation
	now      time.Time    // in loc
	loc      *time.Location
	cat      Catalogue
	q        questions
	qAM, qPM bool
}

// Extract reads one message. It returns an error only for a cancelled
// context or a nil location; everything a customer can write yields a
// Result, with a Question when it cannot be booked as is.
func (Rules) Extract(ctx context.Context, text string, now time.Time, loc *time.Location, cat Catalogue) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if loc == nil {
		return Result{}, errors.New("intent: nil location")
	}
	toks := tokenize(text)
	now = now.In(loc)
	p := &parser{
		toks: toks, used: make([]bool, len(toks)), now: now, loc: loc, cat: cat,
		q: questions{lang: detectLang(toks), year: now.Year(), cat: cat},
	}
	return p.run(), nil
}

func (p *parser) word(i int) string {
	if i < 0 || i >= len(p.toks) {
		return ""
	}
	return p.toks[i].s
}

// phraseAt reports whether the phrase starts at token i.
func (p *parser) phraseAt(i int, phrase []string) bool {
	for k, w := range phrase {
		if p.word(i+k) != w {
			return false
		}
	}
	return true
}

// find returns the first position of any phrase of list, or -1.
func (p *parser) find(list lexicon) int {
	for i := range p.toks {
		for _, ph := range list {
			if p.phraseAt(i, ph) {
				return i
			}
		}
	}
	return -1
}

func (p *parser) has(list lexicon) bool { return p.find(list) >= 0 }

// scanClauses splits the message at punctuation, sentence ends and words
// like "aber"/"but", and records which clauses are negated.
func (p *parser) scanClauses() {
	p.clause = make([]int, len(p.toks))
	p.negated = map[int]bool{}
	idiom := make([]bool, len(p.toks))
	for i := range p.toks {
		for _, ph := range notNegations {
			if p.phraseAt(i, ph) {
				for k := range ph {
					idiom[i+k] = true
				}
			}
		}
	}
	c := 0
	for i, t := range p.toks {
		if i > 0 && (p.toks[i-1].brk || sentenceEnd(p.toks[i-1]) || clauseStarters[t.s]) {
			c++
		}
		p.clause[i] = c
		if idiom[i] {
			continue
		}
		if negations[t.s] {
			p.negated[c], p.negation = true, true
		}
		if interjections[t.s] {
			p.negation = true
		}
	}
}

// sentenceEnd: a dotted word ends a sentence unless it is an abbreviation
// ("Di.", "Dez.", "ca.").
func sentenceEnd(t token) bool {
	if !t.dot || !hasLetter(t.s) || abbreviations[t.s] {
		return false
	}
	_, month := months[t.s]
	_, wd := dottedWeekdays[t.s]
	return !month && !wd
}

// sayOff spots the separable German verb: "ich sage den Termin ab".
func (p *parser) sayOff() bool {
	for i, t := range p.toks {
		if t.s != "sage" && t.s != "sag" && t.s != "sagen" && t.s != "sagt" {
			continue
		}
		for k := i + 1; k < len(p.toks) && k <= i+6 && p.clause[k] == p.clause[i]; k++ {
			if p.toks[k].s == "ab" && p.word(k+1) != "wann" {
				return true
			}
		}
	}
	return false
}

// run reads the message into a Result: its kind, the slots it names, and
// at most one question for the customer.
func (p *parser) run() Result {
	res := Result{Lang: p.q.lang, Kind: KindUnclear}
	if len(p.toks) == 0 {
		res.Question = p.q.unclear()
		return res
	}
	p.scanClauses()
	cancel := p.has(cancelWords) || p.sayOff()
	reschedule := p.has(rescheduleWords) || (cancel && p.has(insteadWords))
	p.scanQualifiers()
	ms := p.collectMentions(!cancel)
	var fq firstQuestion
	day := p.fillSlots(&res, ms, &fq)
	p.classify(&res, ms, &fq, cancel, reschedule)
	if res.Kind == KindBook && fq.text == "" {
		fq.text = p.q.missingFor(res, day)
	}
	res.Question = fq.text
	return res
}

// mentions is what a message names, each with the token it starts at.
type mentions struct {
	services  []mention
	resources []mention
	times     []timeCand
	dates     []dateCand
}

// collectMentions collects the message's services, resources, times and dates;
// with dropNegated, those in a negated clause are left out.
func (p *parser) collectMentions(dropNegated bool) mentions {
	var ms mentions
	ms.resources = p.matchResources()
	ms.services = p.matchServices()
	ms.times = p.parseTimes()
	ms.dates = p.parseDates()
	if dropNegated {
		// A negated clause says what the customer does not want.
		ms.services = filter(ms.services, func(m mention) bool { return !p.negated[p.clause[m.pos]] })
		ms.resources = filter(ms.resources, func(m mention) bool { return !p.negated[p.clause[m.pos]] })
		ms.times = filter(ms.times, func(c timeCand) bool { return !p.negated[p.clause[c.start]] })
		ms.dates = filter(ms.dates, func(c dateCand) bool { return !p.negated[p.clause[c.start]] })
	}
	return ms
}

// firstQuestion keeps the first question asked: the customer gets one
// question at a time.
type firstQuestion struct{ text string }

// ask records q unless a question is already pending.
func (f *firstQuestion) ask(q string) {
	if f.text == "" {
		f.text = q
	}
}

// fillSlots resolves the mentioned time, date, service and resource into
// res, asking through fq when they disagree or the time does not exist,
// and returns the resolved day (meaningful when res.HasDate).
func (p *parser) fillSlots(res *Result, ms mentions, fq *firstQuestion) civil {
	clk, timeQ := p.resolveTime(ms.times)
	day, hasDay, dateQ := p.resolveDate(ms.dates, clk)
	fq.ask(dateQ)
	fq.ask(timeQ)
	if ids := distinctIDs(ms.services); len(ids) == 1 {
		res.Service = ids[0]
	} else if len(ids) > 1 {
		fq.ask(p.q.whichService(ids[0], ids[1]))
	}
	if ids := distinctIDs(ms.resources); len(ids) == 1 {
		res.Resource = ids[0]
	} else if len(ids) > 1 {
		fq.ask(p.q.whichResource(ids[0], ids[1]))
	}
	if hasDay {
		res.HasDate, res.Day = true, time.Date(day.y, day.m, day.d, 0, 0, 0, 0, p.loc)
	}
	if clk != nil {
		res.HasTime, res.Hour, res.Minute = true, clk[0], clk[1]
	}
	if hasDay && clk != nil && !res.setStart(day, p.loc) {
		fq.ask(p.q.invalidTime())
	}
	return day
}

// classify sets res.Kind from the message's words and mentions; a
// reschedule without its new slot, or a message that is no kind at all,
// gets a question.
func (p *parser) classify(res *Result, ms mentions, fq *firstQuestion, cancel, reschedule bool) {
	mentioned := len(ms.services) > 0 || len(ms.times) > 0 || len(ms.dates) > 0
	confirmable := !p.negation
	switch {
	case reschedule:
		res.Kind = KindReschedule
		if res.Start.IsZero() {
			fq.ask(p.q.rescheduleWhen())
		}
	case cancel:
		res.Kind = KindCancel
	case confirmable && p.has(strongConfirm):
		res.Kind = KindConfirm
	case p.has(bookWords) || len(ms.services) > 0:
		res.Kind = KindBook
	case confirmable && p.has(weakConfirm):
		res.Kind = KindConfirm
	case mentioned:
		res.Kind = KindBook
	case p.negation:
		fq.ask(p.q.instead())
	default:
		fq.ask(p.q.unclear())
	}
}

// resolveTime combines all times mentioned into one wall clock, or a
// question when they disagree, are a range or do not exist.
func (p *parser) resolveTime(cands []timeCand) (*[2]int, string) {
	var exact []timeCand
	for _, c := range cands {
		if !c.noon {
			exact = append(exact, c)
		}
	}
	if len(exact) == 0 {
		exact = cands
	}
	var clocks [][2]int
	for _, c := range exact {
		if c.ranged {
			return nil, p.q.exactTime()
		}
		h, m, ok := p.clock(c)
		if !ok {
			return nil, p.q.invalidTime()
		}
		k := [2]int{h, m}
		dup := false
		for _, x := range clocks {
			dup = dup || x == k
		}
		if !dup {
			clocks = append(clocks, k)
		}
	}
	switch len(clocks) {
	case 0:
		return nil, ""
	case 1:
		return &clocks[0], ""
	}
	return nil, p.q.whichTime(clocks[0], clocks[1])
}

func filter[T any](xs []T, keep func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

package tenants

import (
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/bookonce/bookonce/consent"
)

func (v *validator) resource(p string, res Resource, seen map[string]string) {
	v.id(join(p, "id"), res.ID, "resource", seen)
	v.nonEmpty(join(p, "name"), res.Name)
	if !slices.Contains(resourceKinds, res.Kind) {
		v.fail(join(p, "kind"), "must be bay or technician, got %q", res.Kind)
	}
	if len(res.Hours) == 0 {
		v.fail(join(p, "hours"), "must open on at least one weekday (a resource that never opens cannot be booked)")
	}
	valid := true
	for day := 1; day <= 7; day++ {
		iv, open := res.Hours[day]
		if !open {
			continue
		}
		dp := join(join(p, "hours"), weekdayNames[day-1])
		if !clockPattern.MatchString(iv.Opens) || !clockPattern.MatchString(iv.Closes) {
			v.fail(dp, "times must be HH:MM (00:00 to 23:59), got %s-%s", iv.Opens, iv.Closes)
			valid = false
		} else if iv.Closes <= iv.Opens {
			v.fail(dp, "must close after it opens, got %s-%s", iv.Opens, iv.Closes)
			valid = false
		}
	}
	if valid && len(res.Hours) > 0 {
		if common := commonHours(res.Hours); common.Closes <= common.Opens {
			v.fail(join(p, "hours"), "the open days share no common hours (%s-%s); the calendar applies one interval to every open day until it reads hours per weekday", common.Opens, common.Closes)
		}
	}
	v.shopCalendar(join(p, "calendar"), res.Calendar)
	days := map[string]bool{}
	for j, d := range res.ClosedDays {
		dp := index(join(p, "closed_days"), j)
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			v.fail(dp, "must be a date such as 2026-12-24, got %q", d)
		} else if days[d] {
			v.fail(dp, "date %s given twice", d)
		}
		days[d] = true
	}
}

// commonHours is the interval open on every open day: the latest opening
// and the earliest closing. The calendar API has one interval per
// resource, so it gets the one that never books outside the real hours.
func commonHours(hours map[int]Interval) Interval {
	var out Interval
	for _, iv := range hours {
		if out.Opens == "" || iv.Opens > out.Opens {
			out.Opens = iv.Opens
		}
		if out.Closes == "" || iv.Closes < out.Closes {
			out.Closes = iv.Closes
		}
	}
	return out
}

func (v *validator) service(p string, s Service, lang Language, resources, seen map[string]string) {
	v.id(join(p, "id"), s.ID, "service", seen)
	v.nonEmpty(join(p, "name"), s.Name)
	switch {
	case s.Duration <= 0:
		v.fail(join(p, "duration"), "must be positive")
	case s.Duration%time.Minute != 0:
		v.fail(join(p, "duration"), "must be whole minutes, got %s", s.Duration)
	}
	if len(s.Resources) == 0 {
		v.fail(join(p, "resources"), "must name at least one resource that can do it")
	}
	named := map[string]bool{}
	for j, r := range s.Resources {
		rp := index(join(p, "resources"), j)
		if _, ok := resources[r]; !ok {
			v.fail(rp, "no resource %q in this tenant", r)
		} else if named[r] {
			v.fail(rp, "resource %q named twice", r)
		}
		named[r] = true
	}
	if s.Deposit.Amount < 1 || s.Deposit.Amount > maxDeposit {
		v.fail(join(p, "deposit.amount"), "must be between 1 and %d minor units (2000 = 20.00), got %d", maxDeposit, s.Deposit.Amount)
	}
	if !currencyCode.MatchString(s.Deposit.Currency) {
		v.fail(join(p, "deposit.currency"), "must be a 3-letter ISO code such as eur, got %q", s.Deposit.Currency)
	}
	for l, names := range s.Synonyms {
		sp := join(join(p, "synonyms"), string(l))
		if !supported(l) {
			v.fail(sp, "unsupported language %q (supported: %s)", l, languageList())
		}
		for j, n := range names {
			v.nonEmpty(index(sp, j), n)
		}
	}
	if len(s.Synonyms[lang]) == 0 {
		v.fail(join(p, "synonyms"), "needs at least one name in the tenant's language %q: customers name the service with it, and the first is its label", lang)
	}
}

func (v *validator) policies(p string, pol Policies) {
	if pol.CallerLinks != "" && pol.CallerLinks != "whatsapp" && pol.CallerLinks != "sms" {
		v.fail(join(p, "caller_links"), "must be whatsapp or sms, got %q", pol.CallerLinks)
	}
	for name, d := range map[string]time.Duration{"hold_ttl": pol.HoldTTL, "dedup_window": pol.DedupWindow, "cancellation_window": pol.CancellationWindow} {
		if d < 0 {
			v.fail(join(p, name), "must not be negative")
		}
	}
	seen := map[time.Duration]bool{}
	for j, d := range pol.Reminders {
		rp := index(join(p, "reminders"), j)
		if d <= 0 {
			v.fail(rp, "must be positive")
		} else if seen[d] {
			v.fail(rp, "reminder %s given twice", d)
		}
		seen[d] = true
	}
	v.keywords(p, pol)
	if q := pol.QuietHours; q != nil {
		qp := join(p, "quiet_hours")
		if !clockPattern.MatchString(q.Opens) || !clockPattern.MatchString(q.Closes) {
			v.fail(qp, "times must be HH:MM, got %s-%s", q.Opens, q.Closes)
		} else if q.Opens == q.Closes {
			v.fail(qp, "must not start and end at the same time")
		}
	}
}

func (v *validator) templates(p string, all map[Language]map[TemplateName]string) {
	for l, texts := range all {
		lp := join(p, string(l))
		if !supported(l) {
			v.fail(lp, "unsupported language %q (supported: %s)", l, languageList())
			continue
		}
		for name, text := range texts {
			np := join(lp, string(name))
			if !knownTemplate(name) {
				v.fail(np, "unknown template (docs/tenants.md lists them)")
				continue
			}
			if _, err := parseTemplate(name, text); err != nil {
				v.fail(np, "template does not work: %v", err)
			}
		}
	}
}

// keywords checks the consent keywords: each one word, none both a stop
// and a start (an empty list is the defaults).
func (v *validator) keywords(p string, pol Policies) {
	for name, list := range map[string][]string{"opt_out_keywords": pol.OptOutKeywords, "opt_in_keywords": pol.OptInKeywords} {
		for j, k := range list {
			if k == "" || strings.ContainsFunc(k, unicode.IsSpace) {
				v.fail(index(join(p, name), j), "must be one word, got %q", k)
			}
		}
	}
	stop := pol.OptOutKeywords
	if stop == nil {
		stop = consent.DefaultStop
	}
	for j, k := range pol.OptInKeywords {
		if slices.Contains(stop, k) {
			v.fail(index(join(p, "opt_in_keywords"), j), "%q is also an opt-out keyword", k)
		}
	}
}

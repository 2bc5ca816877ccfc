package tenants

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bookonce/bookonce/consent"
)

// ReadFile reads, parses and validates a tenants file.
func ReadFile(path string) (File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("read tenants file: %w", err)
	}
	return Parse(filepath.Base(path), data)
}

// Parse reads a tenants file, validates it and returns it normalised. name
// prefixes every problem ("tenants.yaml:14: ..."). A rejected file returns
// a *ValidationError that lists every problem with its line and field.
func Parse(name string, data []byte) (File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return File{}, &ValidationError{Problems: []Problem{{File: name, Message: "not valid YAML: " + err.Error()}}}
	}
	r := &reader{file: name, pos: map[string]int{}}
	f := File{pos: r.pos, name: name}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return File{}, &ValidationError{Problems: []Problem{{File: name, Message: "empty file; expected a top-level tenants: list"}}}
	}
	top := r.mapping(doc.Content[0], "", "!tenants")
	if n := top["tenants"]; n != nil {
		for i, item := range r.list(n, "tenants") {
			f.Tenants = append(f.Tenants, r.tenant(item, index("tenants", i)))
		}
	}
	if len(r.problems) > 0 {
		return File{}, &ValidationError{Problems: r.problems}
	}
	if err := Validate(f); err != nil {
		return File{}, err
	}
	return normalise(f), nil
}

func (r *reader) tenant(n *yaml.Node, path string) Tenant {
	m := r.mapping(n, path, "!id", "!name", "api_token_sha256", "twilio_numbers", "!timezone", "!language",
		"resources", "services", "policies", "templates", "whatsapp_templates", "senders")
	var t Tenant
	t.ID, _ = r.str(m["id"], join(path, "id"))
	t.Name, _ = r.str(m["name"], join(path, "name"))
	t.TokenHashes = r.texts(m["api_token_sha256"], join(path, "api_token_sha256"))
	t.Numbers = r.texts(m["twilio_numbers"], join(path, "twilio_numbers"))
	t.Timezone, _ = r.str(m["timezone"], join(path, "timezone"))
	lang, _ := r.str(m["language"], join(path, "language"))
	t.Language = Language(lang)
	if n := m["resources"]; n != nil {
		for i, item := range r.list(n, join(path, "resources")) {
			t.Resources = append(t.Resources, r.resource(item, index(join(path, "resources"), i)))
		}
	}
	if n := m["services"]; n != nil {
		for i, item := range r.list(n, join(path, "services")) {
			t.Services = append(t.Services, r.service(item, index(join(path, "services"), i)))
		}
	}
	if n := m["policies"]; n != nil {
		t.Policies = r.policies(n, join(path, "policies"))
	}
	if n := m["templates"]; n != nil {
		t.Templates = r.templates(n, join(path, "templates"))
	}
	if n := m["senders"]; n != nil {
		t.Senders = r.senders(n, join(path, "senders"))
	}
	if n := m["whatsapp_templates"]; n != nil {
		t.WhatsApp = r.whatsApp(n, join(path, "whatsapp_templates"))
	}
	return t
}

func (r *reader) resource(n *yaml.Node, path string) Resource {
	m := r.mapping(n, path, "!id", "!name", "!kind", "!hours", "closed_days", "calendar")
	var res Resource
	res.ID, _ = r.str(m["id"], join(path, "id"))
	res.Name, _ = r.str(m["name"], join(path, "name"))
	res.Kind, _ = r.str(m["kind"], join(path, "kind"))
	res.ClosedDays = r.texts(m["closed_days"], join(path, "closed_days"))
	if n := m["hours"]; n != nil {
		res.Hours = r.hours(n, join(path, "hours"))
	}
	if n := m["calendar"]; n != nil {
		res.Calendar = r.shopCalendar(n, join(path, "calendar"))
	}
	return res
}

var weekdayNames = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// isoWeekday maps "mon".."sun" to 1..7, 0 if unknown.
func isoWeekday(name string) int {
	for i, w := range weekdayNames {
		if w == name {
			return i + 1
		}
	}
	return 0
}

// hours reads "mon: 08:00-18:00" lines; a key may be a range ("mon-fri").
func (r *reader) hours(n *yaml.Node, path string) map[int]Interval {
	out := map[int]Interval{}
	for _, p := range r.pairs(n, path) {
		sub := join(path, p.key)
		from, to, isRange := strings.Cut(p.key, "-")
		first, last := isoWeekday(from), isoWeekday(from)
		if isRange {
			last = isoWeekday(to)
		}
		if first == 0 || last == 0 || last < first {
			r.fail(p.value, sub, "must be a weekday (mon, tue, wed, thu, fri, sat, sun) or a range such as mon-fri")
			continue
		}
		text, ok := r.str(p.value, sub)
		if !ok {
			continue
		}
		iv, ok := parseInterval(text)
		if !ok {
			r.fail(p.value, sub, "must be opening hours such as 08:00-18:00, got %q", text)
			continue
		}
		for d := first; d <= last; d++ {
			day := join(path, weekdayNames[d-1])
			if _, dup := out[d]; dup {
				r.fail(p.value, day, "given twice")
				continue
			}
			out[d] = iv
			r.pos[day] = p.value.Line
		}
	}
	return out
}

// parseInterval splits "08:00-18:00"; the times are checked by Validate.
func parseInterval(s string) (Interval, bool) {
	a, b, ok := strings.Cut(strings.ReplaceAll(s, " ", ""), "-")
	return Interval{Opens: a, Closes: b}, ok && a != "" && b != ""
}

func (r *reader) service(n *yaml.Node, path string) Service {
	m := r.mapping(n, path, "!id", "!name", "!duration", "!resources", "!deposit", "synonyms")
	var s Service
	s.ID, _ = r.str(m["id"], join(path, "id"))
	s.Name, _ = r.str(m["name"], join(path, "name"))
	s.Duration, _ = r.duration(m["duration"], join(path, "duration"))
	s.Resources = r.texts(m["resources"], join(path, "resources"))
	if n := m["deposit"]; n != nil {
		dp := join(path, "deposit")
		dm := r.mapping(n, dp, "!amount", "!currency")
		s.Deposit.Amount, _ = r.integer(dm["amount"], join(dp, "amount"))
		s.Deposit.Currency, _ = r.str(dm["currency"], join(dp, "currency"))
	}
	if n := m["synonyms"]; n != nil {
		s.Synonyms = map[Language][]string{}
		for _, p := range r.pairs(n, join(path, "synonyms")) {
			s.Synonyms[Language(p.key)] = r.texts(p.value, join(join(path, "synonyms"), p.key))
		}
	}
	return s
}

func (r *reader) policies(n *yaml.Node, path string) Policies {
	m := r.mapping(n, path, "hold_ttl", "dedup_window", "cancellation_window", "reminders", "quiet_hours", "opt_out_keywords", "opt_in_keywords",
		"caller_links")
	var p Policies
	if n := m["hold_ttl"]; n != nil {
		p.HoldTTL, _ = r.duration(n, join(path, "hold_ttl"))
	}
	if n := m["dedup_window"]; n != nil {
		p.DedupWindow, _ = r.duration(n, join(path, "dedup_window"))
	}
	if n := m["cancellation_window"]; n != nil {
		p.CancellationWindow, _ = r.duration(n, join(path, "cancellation_window"))
	}
	if n := m["reminders"]; n != nil {
		for i, item := range r.list(n, join(path, "reminders")) {
			if d, ok := r.duration(item, index(join(path, "reminders"), i)); ok {
				p.Reminders = append(p.Reminders, d)
			}
		}
	}
	if n := m["quiet_hours"]; n != nil {
		qp := join(path, "quiet_hours")
		if text, ok := r.str(n, qp); ok {
			iv, ok := parseInterval(text)
			if !ok {
				r.fail(n, qp, "must be a time range such as 21:00-08:00, got %q", text)
			} else {
				p.QuietHours = &iv
			}
		}
	}
	p.OptOutKeywords = keywords(r.texts(m["opt_out_keywords"], join(path, "opt_out_keywords")))
	p.OptInKeywords = keywords(r.texts(m["opt_in_keywords"], join(path, "opt_in_keywords")))
	p.CallerLinks, _ = r.str(m["caller_links"], join(path, "caller_links"))
	return p
}

// keywords are consent keywords as consent.Match compares them.
func keywords(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, k := range list {
		out[i] = consent.Normal(k)
	}
	return out
}

// templates reads "de: {confirmation: ...}"; names and languages are
// checked by Validate, which also parses the texts.
func (r *reader) templates(n *yaml.Node, path string) map[Language]map[TemplateName]string {
	out := map[Language]map[TemplateName]string{}
	for _, lp := range r.pairs(n, path) {
		texts := map[TemplateName]string{}
		for _, tp := range r.pairs(lp.value, join(path, lp.key)) {
			if s, ok := r.str(tp.value, join(join(path, lp.key), tp.key)); ok {
				texts[TemplateName(tp.key)] = s
			}
		}
		out[Language(lp.key)] = texts
	}
	return out
}

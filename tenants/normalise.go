package tenants

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
)

// NormaliseNumber turns a Twilio address ("whatsapp:+4930123456", " +49
// 30 123456") into the E.164 number it names: WhatsApp and voice reach
// one tenant through one number.
func NormaliseNumber(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= len("whatsapp:") && strings.EqualFold(s[:len("whatsapp:")], "whatsapp:") {
		s = s[len("whatsapp:"):]
	}
	return strings.NewReplacer(" ", "", "-", "", "(", "", ")", "").Replace(s)
}

// normalise brings a valid File into the canonical form the database
// returns too, so that comparing the two is comparing configurations:
// sorted tenants, resources, numbers and digests, lower-case digests and
// currencies, reminders longest first, empty maps and lists as nil.
func normalise(f File) File {
	out := File{name: f.name}
	for _, t := range f.Tenants {
		out.Tenants = append(out.Tenants, normaliseTenant(t))
	}
	slices.SortFunc(out.Tenants, func(a, b Tenant) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func normaliseTenant(t Tenant) Tenant {
	t.TokenHashes = sortedSet(t.TokenHashes, strings.ToLower)
	t.Numbers = sortedSet(t.Numbers, NormaliseNumber)
	rs := make([]Resource, 0, len(t.Resources))
	for _, r := range t.Resources {
		r.ClosedDays = sortedSet(r.ClosedDays, strings.TrimSpace)
		if len(r.Hours) == 0 {
			r.Hours = nil
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b Resource) int { return cmp.Compare(a.ID, b.ID) })
	t.Resources = nilIfEmpty(rs)
	ss := make([]Service, 0, len(t.Services))
	for _, s := range t.Services {
		s.Resources = sortedSet(s.Resources, strings.TrimSpace)
		s.Deposit.Currency = strings.ToLower(s.Deposit.Currency)
		syn := map[Language][]string{}
		for l, names := range s.Synonyms {
			if len(names) > 0 {
				syn[l] = slices.Clone(names)
			}
		}
		s.Synonyms = nilIfEmptyMap(syn)
		ss = append(ss, s)
	}
	t.Services = nilIfEmpty(ss)
	t.Policies.Reminders = nilIfEmpty(slices.Clone(t.Policies.Reminders))
	slices.SortFunc(t.Policies.Reminders, func(a, b time.Duration) int { return cmp.Compare(b, a) })
	tpl := map[Language]map[TemplateName]string{}
	for l, texts := range t.Templates {
		if len(texts) > 0 {
			tpl[l] = maps.Clone(texts)
		}
	}
	t.Templates = nilIfEmptyMap(tpl)
	t.WhatsApp = normaliseWhatsApp(t.WhatsApp)
	t.Senders = normaliseSenders(t.Senders)
	return t
}

func sortedSet(in []string, norm func(string) string) []string {
	var out []string
	for _, s := range in {
		if n := norm(s); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func nilIfEmptyMap[K comparable, V any](m map[K]V) map[K]V {
	if len(m) == 0 {
		return nil
	}
	return m
}

package tenants

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Op is what a change does.
type Op string

// The operations of a Diff.
const (
	Added   Op = "+"
	Changed Op = "~"
	Removed Op = "-"
)

// Change is one line of a Diff.
type Change struct {
	Op Op
	// Kind is tenant, resource, service, number, token, template or
	// policies.
	Kind   string
	Tenant string
	// ID names the thing within the tenant (a resource ID, a number, a
	// digest's first 12 characters, "de/confirmation"); empty for the
	// tenant itself and its policies.
	ID string
	// Details say what changed ("duration 30m0s -> 45m0s").
	Details []string
}

func (c Change) String() string {
	s := fmt.Sprintf("%s %s %s", c.Op, c.Kind, c.Tenant)
	if c.ID != "" {
		s += "/" + c.ID
	}
	if len(c.Details) > 0 {
		s += ": " + strings.Join(c.Details, "; ")
	}
	return s
}

// Diff is what applying a file changes, in a stable order; empty when the
// database already holds the file.
type Diff struct {
	Changes []Change
	// Notes are things worth knowing that are not changes (e.g. hours the
	// calendar applies in a simplified form).
	Notes []string
}

// Empty reports whether applying changes nothing.
func (d Diff) Empty() bool { return len(d.Changes) == 0 }

// String renders one change per line, then the notes.
func (d Diff) String() string {
	if d.Empty() && len(d.Notes) == 0 {
		return "no changes\n"
	}
	var b strings.Builder
	for _, c := range d.Changes {
		b.WriteString(c.String() + "\n")
	}
	if d.Empty() {
		b.WriteString("no changes\n")
	}
	for _, n := range d.Notes {
		b.WriteString("note: " + n + "\n")
	}
	return b.String()
}

// ref names a resource or service of a tenant.
type ref struct{ tenant, id string }

// plan is the diff together with the writes that carry it out.
type plan struct {
	diff             Diff
	upsertTenants    []Tenant // the tenant row: name, zone, language, policies, templates
	removeTenants    []string
	upsertResources  []Tenant // per tenant, the resources to write
	removeResources  []ref
	upsertServices   []Tenant // per tenant, the services to write (with their links)
	removeServices   []ref
	addTokens        []ref // id is the digest
	removeTokens     []ref
	addNumbers       []ref
	removeNumbers    []ref
	serviceOrdinals  map[ref]int
	removedSubjects  []string
	tenantsInTheFile []string
}

// makePlan compares the desired configuration with the current one; both
// are normalised.
func makePlan(want, have File) *plan {
	p := &plan{serviceOrdinals: map[ref]int{}}
	current := map[string]Tenant{}
	for _, t := range have.Tenants {
		current[t.ID] = t
	}
	for _, t := range want.Tenants {
		p.tenantsInTheFile = append(p.tenantsInTheFile, t.ID)
		old, exists := current[t.ID]
		delete(current, t.ID)
		if !exists {
			p.add(Change{Op: Added, Kind: "tenant", Tenant: t.ID, Details: []string{fmt.Sprintf("%q, %s, %s", t.Name, t.Timezone, t.Language)}})
			old = Tenant{ID: t.ID}
		}
		p.compareTenant(old, t, exists)
	}
	for _, id := range sortedKeys(current) {
		t := current[id]
		p.add(Change{Op: Removed, Kind: "tenant", Tenant: id})
		p.removeTenants = append(p.removeTenants, id)
		p.removedSubjects = append(p.removedSubjects, "tenant "+id)
		p.compareTenant(t, Tenant{ID: id}, false)
	}
	for _, t := range want.Tenants {
		for i, s := range t.Services {
			p.serviceOrdinals[ref{t.ID, s.ID}] = i
		}
	}
	return p
}

func (p *plan) add(c Change) { p.diff.Changes = append(p.diff.Changes, c) }

// compareTenant adds the changes from old to t. rowExists says whether
// old is a stored row (a changed row is rewritten; an added one always).
func (p *plan) compareTenant(old, t Tenant, rowExists bool) {
	removing := slices.Contains(p.removeTenants, t.ID)
	rowChanged := !rowExists && !removing
	if rowExists {
		var d []string
		d = appendIf(d, old.Name != t.Name, "name %q -> %q", old.Name, t.Name)
		d = appendIf(d, old.Timezone != t.Timezone, "timezone %s -> %s", old.Timezone, t.Timezone)
		d = appendIf(d, old.Language != t.Language, "language %s -> %s", old.Language, t.Language)
		d = appendIf(d, old.Senders != t.Senders, "senders %+v -> %+v", old.Senders, t.Senders)
		if len(d) > 0 {
			p.add(Change{Op: Changed, Kind: "tenant", Tenant: t.ID, Details: d})
			rowChanged = true
		}
	}
	if d := policyChanges(old.Policies, t.Policies); len(d) > 0 && !removing {
		p.add(Change{Op: Changed, Kind: "policies", Tenant: t.ID, Details: d})
		rowChanged = true
	}
	if !removing && p.compareTemplates(t.ID, old.Templates, t.Templates) {
		rowChanged = true
	}
	if !removing && compareByLanguage(p, "whatsapp template", t.ID, old.WhatsApp, t.WhatsApp, sameWhatsApp, "") {
		rowChanged = true
	}
	if rowChanged {
		p.upsertTenants = append(p.upsertTenants, t)
	}
	p.compareSets("token", t.ID, old.TokenHashes, t.TokenHashes, &p.addTokens, &p.removeTokens)
	p.compareSets("number", t.ID, old.Numbers, t.Numbers, &p.addNumbers, &p.removeNumbers)
	p.compareResources(old, t)
	p.compareServices(old, t)
}

func appendIf(d []string, cond bool, format string, args ...any) []string {
	if cond {
		return append(d, fmt.Sprintf(format, args...))
	}
	return d
}

func (p *plan) compareSets(kind, tenant string, old, want []string, add, remove *[]ref) {
	show := func(v string) string {
		if kind == "token" {
			return v[:12] + "…" // a digest prefix is enough to recognise it
		}
		return v
	}
	for _, v := range want {
		if !slices.Contains(old, v) {
			p.add(Change{Op: Added, Kind: kind, Tenant: tenant, ID: show(v)})
			*add = append(*add, ref{tenant, v})
		}
	}
	for _, v := range old {
		if !slices.Contains(want, v) {
			p.add(Change{Op: Removed, Kind: kind, Tenant: tenant, ID: show(v)})
			*remove = append(*remove, ref{tenant, v})
		}
	}
}

func (p *plan) compareTemplates(tenant string, old, want map[Language]map[TemplateName]string) bool {
	return compareByLanguage(p, "template", tenant, old, want, func(a, b string) bool { return a == b }, "back to the built-in text")
}

// compareByLanguage adds a change of kind for every message of a tenant
// whose value per language differs between old and want, and reports
// whether there were any.
func compareByLanguage[V any](p *plan, kind, tenant string, old, want map[Language]map[TemplateName]V, same func(a, b V) bool, removed string) bool {
	changed := false
	for _, l := range Languages {
		names := map[TemplateName]bool{}
		for n := range old[l] {
			names[n] = true
		}
		for n := range want[l] {
			names[n] = true
		}
		for _, n := range sortedKeys(names) {
			was, had := old[l][n]
			is, has := want[l][n]
			c := Change{Kind: kind, Tenant: tenant, ID: string(l) + "/" + string(n)}
			switch {
			case !had && has:
				c.Op = Added
			case had && !has:
				c.Op = Removed
				if removed != "" {
					c.Details = []string{removed}
				}
			case !same(was, is):
				c.Op = Changed
			default:
				continue
			}
			p.add(c)
			changed = true
		}
	}
	return changed
}

func policyChanges(old, want Policies) []string {
	o, w := encodePolicies(old), encodePolicies(want)
	show := func(s string) string {
		if s == "" {
			return "unset"
		}
		return s
	}
	var d []string
	d = appendIf(d, o.HoldTTL != w.HoldTTL, "hold_ttl %s -> %s", show(o.HoldTTL), show(w.HoldTTL))
	d = appendIf(d, o.DedupWindow != w.DedupWindow, "dedup_window %s -> %s", show(o.DedupWindow), show(w.DedupWindow))
	d = appendIf(d, o.CancellationWindow != w.CancellationWindow, "cancellation_window %s -> %s", show(o.CancellationWindow), show(w.CancellationWindow))
	d = appendIf(d, !reflect.DeepEqual(o.Reminders, w.Reminders), "reminders %v -> %v", o.Reminders, w.Reminders)
	d = appendIf(d, o.QuietHours != w.QuietHours, "quiet_hours %s -> %s", show(o.QuietHours), show(w.QuietHours))
	d = appendIf(d, !slices.Equal(o.OptOutKeywords, w.OptOutKeywords), "opt_out_keywords %v -> %v", o.OptOutKeywords, w.OptOutKeywords)
	d = appendIf(d, !slices.Equal(o.OptInKeywords, w.OptInKeywords), "opt_in_keywords %v -> %v", o.OptInKeywords, w.OptInKeywords)
	d = appendIf(d, o.CallerLinks != w.CallerLinks, "caller_links %s -> %s", show(o.CallerLinks), show(w.CallerLinks))
	return d
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package tenants

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

func (p *plan) compareResources(old, t Tenant) {
	have := map[string]Resource{}
	for _, r := range old.Resources {
		have[r.ID] = r
	}
	var write []Resource
	for _, r := range t.Resources {
		prev, exists := have[r.ID]
		delete(have, r.ID)
		switch {
		case !exists:
			p.add(Change{Op: Added, Kind: "resource", Tenant: t.ID, ID: r.ID, Details: []string{fmt.Sprintf("%q, %s, %s", r.Name, r.Kind, formatHours(r.Hours))}})
		case !reflect.DeepEqual(prev, r):
			p.add(Change{Op: Changed, Kind: "resource", Tenant: t.ID, ID: r.ID, Details: resourceChanges(prev, r)})
		default:
			continue
		}
		write = append(write, r)
		if common := commonHours(r.Hours); !sameHours(r.Hours) {
			p.diff.Notes = append(p.diff.Notes, fmt.Sprintf("resource %s/%s has different hours per weekday; the calendar API books it only in the hours all its open days share (%s-%s) until it reads hours per weekday",
				t.ID, r.ID, common.Opens, common.Closes))
		}
	}
	if len(write) > 0 {
		p.upsertResources = append(p.upsertResources, Tenant{ID: t.ID, Resources: write})
	}
	for _, id := range sortedKeys(have) {
		p.add(Change{Op: Removed, Kind: "resource", Tenant: t.ID, ID: id})
		p.removeResources = append(p.removeResources, ref{t.ID, id})
		p.removedSubjects = append(p.removedSubjects, "resource "+t.ID+"/"+id)
	}
}

func resourceChanges(old, r Resource) []string {
	var d []string
	d = appendIf(d, old.Name != r.Name, "name %q -> %q", old.Name, r.Name)
	d = appendIf(d, old.Kind != r.Kind, "kind %s -> %s", old.Kind, r.Kind)
	d = appendIf(d, !reflect.DeepEqual(old.Hours, r.Hours), "hours %s -> %s", formatHours(old.Hours), formatHours(r.Hours))
	d = appendIf(d, !slices.Equal(old.ClosedDays, r.ClosedDays), "closed_days %v -> %v", old.ClosedDays, r.ClosedDays)
	d = appendIf(d, !sameShopCalendar(old.Calendar, r.Calendar), "calendar %s -> %s", old.Calendar, r.Calendar)
	return d
}

func sameHours(h map[int]Interval) bool {
	var first *Interval
	for _, iv := range h {
		if first == nil {
			first = &iv
		} else if *first != iv {
			return false
		}
	}
	return true
}

// formatHours renders hours compactly: "mon-sat 08:00-18:00".
func formatHours(h map[int]Interval) string {
	var parts []string
	for d := 1; d <= 7; d++ {
		iv, ok := h[d]
		if !ok {
			continue
		}
		end := d
		for end < 7 && h[end+1] == iv { // a closed day is the zero Interval
			end++
		}
		days := weekdayNames[d-1]
		if end > d {
			days += "-" + weekdayNames[end-1]
		}
		parts = append(parts, days+" "+iv.Opens+"-"+iv.Closes)
		d = end
	}
	if len(parts) == 0 {
		return "closed"
	}
	return strings.Join(parts, ", ")
}

func (p *plan) compareServices(old, t Tenant) {
	have := map[string]int{}
	for i, s := range old.Services {
		have[s.ID] = i
	}
	var write []Service
	for i, s := range t.Services {
		j, exists := have[s.ID]
		delete(have, s.ID)
		switch {
		case !exists:
			p.add(Change{Op: Added, Kind: "service", Tenant: t.ID, ID: s.ID, Details: []string{fmt.Sprintf("%q, %s, deposit %d %s, on %s",
				s.Name, s.Duration, s.Deposit.Amount, s.Deposit.Currency, strings.Join(s.Resources, ", "))}})
		case !reflect.DeepEqual(old.Services[j], s) || i != j:
			d := serviceChanges(old.Services[j], s)
			d = appendIf(d, i != j, "catalogue position %d -> %d", j+1, i+1)
			p.add(Change{Op: Changed, Kind: "service", Tenant: t.ID, ID: s.ID, Details: d})
		default:
			continue
		}
		write = append(write, s)
	}
	if len(write) > 0 {
		p.upsertServices = append(p.upsertServices, Tenant{ID: t.ID, Services: write})
	}
	for _, id := range sortedKeys(have) {
		p.add(Change{Op: Removed, Kind: "service", Tenant: t.ID, ID: id})
		p.removeServices = append(p.removeServices, ref{t.ID, id})
		p.removedSubjects = append(p.removedSubjects, "service "+t.ID+"/"+id)
	}
}

func serviceChanges(old, s Service) []string {
	var d []string
	d = appendIf(d, old.Name != s.Name, "name %q -> %q", old.Name, s.Name)
	d = appendIf(d, old.Duration != s.Duration, "duration %s -> %s", old.Duration, s.Duration)
	d = appendIf(d, !slices.Equal(old.Resources, s.Resources), "resources %v -> %v", old.Resources, s.Resources)
	d = appendIf(d, old.Deposit != s.Deposit, "deposit %d %s -> %d %s", old.Deposit.Amount, old.Deposit.Currency, s.Deposit.Amount, s.Deposit.Currency)
	d = appendIf(d, !reflect.DeepEqual(old.Synonyms, s.Synonyms), "synonyms changed")
	return d
}

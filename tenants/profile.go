package tenants

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/bookonce/bookonce/intent"
)

// Profile is a configured tenant as the running processes use it: its
// configuration with the time zone loaded and the templates parsed. A
// Profile never changes once loaded; a reload builds new ones, so it may be
// used concurrently and kept for the duration of a request.
type Profile struct {
	// Tenant is the configuration as applied (do not modify).
	Tenant
	// Location is the tenant's business time zone.
	Location  *time.Location
	templates map[Language]map[TemplateName]*template.Template
}

func newProfile(t Tenant) (*Profile, error) {
	loc, err := time.LoadLocation(t.Timezone)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: time zone: %w", t.ID, err)
	}
	p := &Profile{Tenant: t, Location: loc, templates: map[Language]map[TemplateName]*template.Template{}}
	for lang, texts := range t.Templates {
		p.templates[lang] = map[TemplateName]*template.Template{}
		for name, text := range texts {
			tpl, err := parseTemplate(name, text)
			if err != nil {
				return nil, fmt.Errorf("tenant %s: template %s/%s: %w", t.ID, lang, name, err)
			}
			p.templates[lang][name] = tpl
		}
	}
	return p, nil
}

// Service returns the service with the given ID.
func (p *Profile) Service(id string) (Service, bool) {
	for _, s := range p.Services {
		if s.ID == id {
			return s, true
		}
	}
	return Service{}, false
}

// Deposit returns the deposit of a service (amount in minor units, lower-case
// currency), false for an unknown service.
func (p *Profile) Deposit(serviceID string) (Money, bool) {
	s, ok := p.Service(serviceID)
	return s.Deposit, ok
}

// Label names a service in lang as customers know it: its first synonym
// in that language, else in the tenant's language, else its ID.
func (p *Profile) Label(serviceID string, lang Language) string {
	s, ok := p.Service(serviceID)
	if !ok {
		return serviceID
	}
	for _, l := range []Language{lang, p.Language} {
		if names := s.Synonyms[l]; len(names) > 0 {
			return names[0]
		}
	}
	return s.ID
}

// Render fills a message template in the tenant's language.
func (p *Profile) Render(name TemplateName, data MessageData) (string, error) {
	return p.RenderIn(p.Language, name, data)
}

// RenderIn fills a message template in lang: the tenant's own text if it
// has one, else the built-in default of that language.
func (p *Profile) RenderIn(lang Language, name TemplateName, data MessageData) (string, error) {
	tpl := p.templates[lang][name]
	if tpl == nil {
		tpl = builtin[lang][name]
	}
	if tpl == nil {
		return "", fmt.Errorf("render %s/%s: %w", lang, name, ErrUnknownTemplate)
	}
	var b strings.Builder
	if err := tpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("render %s/%s for tenant %s: %w", lang, name, p.ID, err)
	}
	return b.String(), nil
}

// ErrUnknownTemplate is returned for a template name or language that has
// no text, neither the tenant's nor built in.
var ErrUnknownTemplate = errors.New("unknown template")

// Catalogue is the tenant's catalogue for intent recognition: its services
// in file order, each with the synonyms of the tenant's language first and
// then those of the other languages, the first synonym per language as its
// label, and the widest opening hours of its resources (the calendar checks
// each resource's own hours when it books). Resource names are left out:
// customers do not pick a bay. A new value on every call, free to modify.
func (p *Profile) Catalogue() intent.Catalogue {
	c := intent.Catalogue{Tenant: p.ID}
	order := append([]Language{p.Language}, Languages...)
	for _, s := range p.Services {
		svc := intent.Service{ID: s.ID, DurationMinutes: int(s.Duration / time.Minute), Labels: map[string]string{}}
		seen := map[Language]bool{}
		for _, l := range order {
			if seen[l] {
				continue
			}
			seen[l] = true
			svc.Names = append(svc.Names, s.Synonyms[l]...)
			if names := s.Synonyms[l]; len(names) > 0 {
				svc.Labels[string(l)] = names[0]
			}
		}
		c.Services = append(c.Services, svc)
	}
	days := map[int]bool{}
	for _, r := range p.Resources {
		for d, iv := range r.Hours {
			days[d] = true
			if c.Opens == "" || iv.Opens < c.Opens {
				c.Opens = iv.Opens
			}
			if c.Closes == "" || iv.Closes > c.Closes {
				c.Closes = iv.Closes
			}
		}
	}
	for d := 1; d <= 7; d++ {
		if days[d] {
			c.Weekdays = append(c.Weekdays, time.Weekday(d%7)) // ISO 7 is Sunday, Go's 0
		}
	}
	return c
}

// HasNumber reports whether a Twilio address belongs to the tenant.
func (p *Profile) HasNumber(to string) bool {
	return slices.Contains(p.Numbers, NormaliseNumber(to))
}

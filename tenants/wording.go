package tenants

import (
	"strings"
	"text/template"
	"time"

	"github.com/bookonce/bookonce/intent"
)

// The workflows render their messages from the Terms they were given or
// recorded: text/template is deterministic, and the terms come from the
// input or an activity result, so a replay renders the same text. Runs
// recorded before tenants were configurable have no terms (a nil *Terms):
// they render the built-in German texts, which are word for word the
// texts those runs sent, with the demo catalogue's labels. Every method
// here is safe on a nil *Terms for that reason.

// Lang is the language customers of these terms are answered in; German
// without terms.
func (t *Terms) Lang() Language {
	if t == nil || t.Language == "" {
		return German
	}
	return Language(t.Language)
}

// Render fills a message template: the terms' own text if they have one,
// else the built-in text of their language (German where that language
// has none). A text that fails (it was checked when applied, so only a
// bug) falls back to the built-in one: the customer gets an answer either
// way.
func (t *Terms) Render(name TemplateName, data MessageData) string {
	fallback, ok := DefaultText(t.Lang(), name)
	if !ok {
		fallback, _ = DefaultText(German, name)
	}
	if t != nil {
		if own, ok := t.Wording[string(name)]; ok {
			if out, err := execute(name, own, data); err == nil {
				return out
			}
		}
	}
	out, err := execute(name, fallback, data)
	if err != nil {
		return fallback
	}
	return out
}

func execute(name TemplateName, text string, data MessageData) (string, error) {
	tpl, err := template.New(string(name)).Funcs(funcs).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := tpl.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Label names a service as the customer knows it: the terms' label, else
// the demo catalogue's (runs without terms).
func (t *Terms) Label(service string) string {
	if t != nil {
		if s, ok := t.Services[service]; ok && s.Label != "" {
			return s.Label
		}
	}
	if s, ok := intent.DemoCatalogue().Service(service); ok {
		return s.Label("de")
	}
	return service
}

// Question is the extractor's or validator's clarifying question q, which
// is German: customers answered in another language get their template
// instead ("").
func (t *Terms) Question(q string) string {
	if t.Lang() != German {
		return ""
	}
	return q
}

// When states at in the time zone tz as customers of lang read it. German
// keeps the format runs sent before tenants were configurable.
func When(at time.Time, tz string, lang Language) string {
	loc, err := time.LoadLocation(tz)
	switch {
	case lang == German && (tz == "" || err != nil):
		return at.UTC().Format("02.01.2006 15:04 UTC")
	case lang == German:
		return at.In(loc).Format("02.01.2006 15:04")
	case tz == "" || err != nil:
		return at.UTC().Format("Mon 2 Jan 2006 15:04 UTC")
	}
	return at.In(loc).Format("Mon 2 Jan 2006 15:04")
}

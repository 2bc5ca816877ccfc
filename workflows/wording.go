package workflows

import (
	"strings"
	"text/template"
	"time"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/tenants"
)

// Messages are rendered inside the workflows from the tenant's terms the
// workflow was given or recorded (activities.TenantTerms): text/template
// is deterministic, and the terms come from the input or an activity
// result, so a replay renders the same text. Runs recorded before tenants
// were configurable have no terms: they render the built-in German texts,
// which are word for word the texts those runs sent, with the demo
// catalogue's labels.

// wordingFuncs are the functions templates may call (as tenants allows).
var wordingFuncs = template.FuncMap{"join": strings.Join}

// Language of terms; German without terms.
func Language(t *activities.TenantTerms) tenants.Language {
	if t == nil || t.Language == "" {
		return tenants.German
	}
	return tenants.Language(t.Language)
}

// Render fills a message template: the tenant's own text if the terms
// have one, else the built-in text of the terms' language. A text that
// fails (it was checked when applied, so only a bug) falls back to the
// built-in one: the customer gets an answer either way.
func Render(t *activities.TenantTerms, name tenants.TemplateName, data tenants.MessageData) string {
	lang := Language(t)
	builtin, ok := tenants.DefaultText(lang, name)
	if !ok {
		builtin, _ = tenants.DefaultText(tenants.German, name)
	}
	if t != nil {
		if own, ok := t.Wording[string(name)]; ok {
			if out, err := execute(name, own, data); err == nil {
				return out
			}
		}
	}
	out, err := execute(name, builtin, data)
	if err != nil {
		return builtin
	}
	return out
}

func execute(name tenants.TemplateName, text string, data tenants.MessageData) (string, error) {
	tpl, err := template.New(string(name)).Funcs(wordingFuncs).Option("missingkey=error").Parse(text)
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
func Label(t *activities.TenantTerms, service string) string {
	if t != nil {
		if s, ok := t.Services[service]; ok && s.Label != "" {
			return s.Label
		}
	}
	return serviceLabel(service)
}

// When states t in the time zone tz as customers of lang read it. German
// keeps the format runs sent before tenants were configurable.
func When(t time.Time, tz string, lang tenants.Language) string {
	if lang == tenants.German {
		return localTime(t, tz)
	}
	loc, err := time.LoadLocation(tz)
	if tz == "" || err != nil {
		return t.UTC().Format("Mon 2 Jan 2006 15:04 UTC")
	}
	return t.In(loc).Format("Mon 2 Jan 2006 15:04")
}

// Question is the extractor's or validator's clarifying question, which
// is German: other languages get their template instead.
func Question(t *activities.TenantTerms, q string) string {
	if Language(t) != tenants.German {
		return ""
	}
	return q
}

// Money writes an amount in minor units as lang writes money (the
// tenants package's one format, which these texts always used).
func Money(amount int64, currency string, lang tenants.Language) string {
	return tenants.Money{Amount: amount, Currency: currency}.Format(lang)
}

// FirstNonEmpty returns the first of s that is not empty.
func FirstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// localTime states t in the business time zone, as the customer reads it.
func localTime(t time.Time, tz string) string {
	loc, err := time.LoadLocation(tz)
	if tz == "" || err != nil {
		return t.UTC().Format("02.01.2006 15:04 UTC")
	}
	return t.In(loc).Format("02.01.2006 15:04")
}

// serviceLabel names a service as the customer knows it.
func serviceLabel(id string) string {
	if s, ok := intent.DemoCatalogue().Service(id); ok {
		return s.Label("de")
	}
	return id
}

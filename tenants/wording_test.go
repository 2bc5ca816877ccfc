package tenants_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/tenants"
)

// A workflow renders from the terms it carries; runs recorded before
// tenants were configurable carry none and must render, word for word,
// the German texts they sent, so a replay produces the same message.
func TestTermsRenderTheirTextElseTheBuiltIn(t *testing.T) {
	data := tenants.MessageData{Service: "Reifenwechsel", When: "01.12.2026 14:00", Booking: "bk_1"}
	english := &tenants.Terms{Language: "en"}
	own := &tenants.Terms{Language: "de", Wording: map[string]string{"confirmation": "Gebucht: {{.Service}}."}}
	broken := &tenants.Terms{Language: "de", Wording: map[string]string{"confirmation": "{{.Nope}}"}}
	cases := []struct {
		name  string
		terms *tenants.Terms
		want  string
	}{
		{"no terms: the German built-in", nil, "Ihr Termin ist bestätigt: Reifenwechsel am 01.12.2026 14:00 (Buchung bk_1)."},
		{"English terms", english, "Your appointment is confirmed: Reifenwechsel on 01.12.2026 14:00 (booking bk_1)."},
		{"the tenant's own text", own, "Gebucht: Reifenwechsel."},
		{"a broken own text falls back", broken, "Ihr Termin ist bestätigt: Reifenwechsel am 01.12.2026 14:00 (Buchung bk_1)."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, c.terms.Render(tenants.TemplateConfirmation, data))
		})
	}
}

func TestTermsLabelLanguageAndQuestion(t *testing.T) {
	var none *tenants.Terms
	london := &tenants.Terms{Language: "en", Services: map[string]tenants.ServiceTerms{"tyres": {Label: "Tyre fitting"}}}
	require.Equal(t, tenants.German, none.Lang())
	require.Equal(t, tenants.English, london.Lang())
	require.Equal(t, "Reifenwechsel", none.Label("tire-change"), "runs without terms name the demo catalogue's service")
	require.Equal(t, "Tyre fitting", london.Label("tyres"))
	require.Equal(t, "unknown", london.Label("unknown"))
	require.Equal(t, "Wann genau?", none.Question("Wann genau?"))
	require.Empty(t, london.Question("Wann genau?"), "the extractor's German question is not for English customers")
}

func TestWhenInEachLanguage(t *testing.T) {
	at := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	cases := []struct {
		tz   string
		lang tenants.Language
		want string
	}{
		{"Europe/Berlin", tenants.German, "01.12.2026 14:00"},
		{"", tenants.German, "01.12.2026 13:00 UTC"},
		{"Mars/Olympus", tenants.German, "01.12.2026 13:00 UTC"},
		{"Europe/London", tenants.English, "Tue 1 Dec 2026 13:00"},
		{"", tenants.English, "Tue 1 Dec 2026 13:00 UTC"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, tenants.When(at, c.tz, c.lang), "%s %s", c.tz, c.lang)
	}
}

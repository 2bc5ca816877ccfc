package tenants_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/tenants"
)

// The German defaults produce, for the same values, exactly the texts the
// workflows build today with fmt.Sprintf (the formats below are theirs),
// so configuring tenants changes no message.
func TestGermanDefaultsAreTodaysTexts(t *testing.T) {
	p := tenants.NewProfileForTest(t, tenants.Tenant{ID: "demo", Timezone: "Europe/Berlin", Language: tenants.German})
	const svc, when = "Reifenwechsel", "01.12.2026 14:00"
	cases := []struct {
		name tenants.TemplateName
		data tenants.MessageData
		want string
	}{
		{tenants.TemplateConfirmation, tenants.MessageData{Service: svc, When: when, Booking: "bk_1"},
			fmt.Sprintf("Ihr Termin ist bestätigt: %s am %s (Buchung %s).", svc, when, "bk_1")},
		{tenants.TemplateBookingStarted, tenants.MessageData{Service: svc, When: when},
			fmt.Sprintf("Danke! Wir buchen %s am %s; die Bestätigung folgt.", svc, when)},
		{tenants.TemplateInProgress, tenants.MessageData{Service: svc, When: when},
			fmt.Sprintf("Ihr Termin (%s, %s) ist bereits in Bearbeitung.", svc, when)},
		{tenants.TemplateCancelInFlight, tenants.MessageData{Service: svc, When: when},
			fmt.Sprintf("Verstanden: Wir stornieren Ihre noch nicht bestätigte Buchung (%s am %s).", svc, when)},
		{tenants.TemplateAlreadyBooked, tenants.MessageData{Service: svc, When: when, Booking: "bk_1"},
			fmt.Sprintf("Sie haben für diese Zeit bereits einen Termin: %s am %s (Buchung %s). Wir haben keinen zweiten gebucht und nichts berechnet.", svc, when, "bk_1")},
		{tenants.TemplateAlreadyBooked, tenants.MessageData{Service: svc, When: when},
			fmt.Sprintf("Sie haben für diese Zeit bereits einen Termin: %s am %s (Buchung %s). Wir haben keinen zweiten gebucht und nichts berechnet.", svc, when, "unbekannt")},
		{tenants.TemplateAlreadyHeld, tenants.MessageData{Service: svc, When: when, Hold: "hold_1"},
			fmt.Sprintf("Für diese Zeit ist bereits ein Termin für Sie in Bearbeitung: %s am %s (Reservierung %s). Wir haben keinen zweiten gebucht und nichts berechnet.", svc, when, "hold_1")},
		{tenants.TemplateAlternatives, tenants.MessageData{Service: svc, When: when},
			fmt.Sprintf("Ihr Wunschtermin (%s, %s) ist leider schon vergeben.", svc, when) + " Welcher andere Termin passt Ihnen?"},
		{tenants.TemplateAlternatives, tenants.MessageData{Service: svc, When: when, Alternatives: []string{"01.12.2026 14:30", "01.12.2026 15:00"}},
			fmt.Sprintf("Ihr Wunschtermin (%s, %s) ist leider schon vergeben.", svc, when) + " Frei wären: 01.12.2026 14:30, 01.12.2026 15:00. Welcher passt Ihnen?"},
		{tenants.TemplateNotUnderstood, tenants.MessageData{}, "Entschuldigung, das habe ich nicht verstanden. Welchen Termin möchten Sie?"},
	}
	for _, c := range cases {
		t.Run(string(c.name), func(t *testing.T) {
			got, err := p.Render(c.name, c.data)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

// Every template has a built-in text in every language, and it renders.
func TestEveryTemplateHasEveryLanguage(t *testing.T) {
	p := tenants.NewProfileForTest(t, tenants.Tenant{ID: "x", Timezone: "UTC", Language: tenants.English})
	for _, lang := range tenants.Languages {
		for _, name := range tenants.TemplateNames() {
			_, ok := tenants.DefaultText(lang, name)
			require.True(t, ok, "%s/%s", lang, name)
			got, err := p.RenderIn(lang, name, tenants.MessageData{Service: "s", When: "w"})
			require.NoError(t, err)
			require.NotEmpty(t, got)
		}
	}
}

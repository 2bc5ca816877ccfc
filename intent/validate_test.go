package intent_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
)

func booking(service string, start time.Time) intent.Result {
	return intent.Result{Kind: intent.KindBook, Service: service, Start: start, HasDate: true, HasTime: true,
		Day: time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, berlin), Hour: start.Hour(), Minute: start.Minute(), Lang: "de"}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		r     intent.Result
		field string // "" means valid
	}{
		{"valid", booking(tire, tue14), ""},
		{"valid confirm", func() intent.Result { r := booking(tire, tue14); r.Kind = intent.KindConfirm; return r }(), ""},
		{"opening minute", booking(insp, at(2026, 12, 1, 8, 0)), ""},
		{"ends at closing", booking(tire, at(2026, 12, 1, 17, 30)), ""},
		{"saturday", booking(oil, at(2026, 12, 5, 9, 0)), ""},
		{"later today", booking(oil, at(2026, 11, 30, 15, 0)), ""},
		{"sunday", booking(tire, at(2026, 12, 6, 10, 0)), intent.FieldStart},
		{"before opening", booking(tire, at(2026, 12, 1, 7, 30)), intent.FieldStart},
		{"at closing", booking(tire, at(2026, 12, 1, 18, 0)), intent.FieldStart},
		{"evening", booking(tire, at(2026, 12, 1, 19, 30)), intent.FieldStart},
		{"inspection too late", booking(insp, at(2026, 12, 1, 17, 0)), intent.FieldStart},
		{"oil change too late", booking(oil, at(2026, 12, 1, 17, 30)), intent.FieldStart},
		{"past today", booking(tire, at(2026, 11, 30, 9, 0)), intent.FieldStart},
		{"now", booking(tire, now), intent.FieldStart},
		{"last year", booking(tire, at(2025, 12, 1, 14, 0)), intent.FieldStart},
		{"unknown service", booking("car-wash", tue14), intent.FieldService},
		{"no service", booking("", tue14), intent.FieldService},
		{"no time", intent.Result{Kind: intent.KindBook, Service: tire, HasDate: true, Day: at(2026, 12, 1, 0, 0)}, intent.FieldTime},
		{"no date", intent.Result{Kind: intent.KindBook, Service: tire, HasTime: true, Hour: 14}, intent.FieldDate},
		{"cancel", intent.Result{Kind: intent.KindCancel}, intent.FieldKind},
		{"unclear", intent.Result{Kind: intent.KindUnclear, Question: "?"}, intent.FieldKind},
		{"open question", func() intent.Result { r := booking(tire, tue14); r.Question = "Meinten Sie …?"; return r }(), intent.FieldStart},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := intent.Validate(tc.r, now, berlin, intent.DemoCatalogue())
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var ve *intent.ValidationError
			require.True(t, errors.As(err, &ve), "%v", err)
			require.Equal(t, tc.field, ve.Field)
			require.NotEmpty(t, ve.Question)
			require.Contains(t, ve.Error(), tc.field)
		})
	}
}

func TestValidateQuestions(t *testing.T) {
	question := func(r intent.Result) string {
		var ve *intent.ValidationError
		require.True(t, errors.As(intent.Validate(r, now, berlin, intent.DemoCatalogue()), &ve))
		return ve.Question
	}
	require.Equal(t, "Am Sonntag haben wir geschlossen; wir sind Montag bis Samstag von 08:00 bis 18:00 Uhr für Sie da. Welcher Tag passt Ihnen?",
		question(booking(tire, at(2026, 12, 6, 10, 0))))
	require.Equal(t, "Inspektion dauert 90 Minuten und muss bis 18:00 Uhr fertig sein, der späteste Beginn ist 16:30 Uhr. Welche frühere Uhrzeit passt Ihnen?",
		question(booking(insp, at(2026, 12, 1, 17, 0))))
	en := booking(tire, at(2026, 12, 1, 19, 0))
	en.Lang = "en"
	require.Equal(t, "At 7:00 pm we are closed; we are open Monday to Saturday from 8:00 am to 6:00 pm. What time works for you?", question(en))
	require.Equal(t, "Um welche Uhrzeit am Dienstag, 1. Dezember, passt es Ihnen?",
		question(intent.Result{Kind: intent.KindBook, Service: tire, HasDate: true, Day: at(2026, 12, 1, 0, 0)}))
	require.Contains(t, question(booking("car-wash", tue14)), "Wir bieten Reifenwechsel, Inspektion, Ölwechsel.")
}

// TestExtractThenValidate runs the pipeline a channel runs.
func TestExtractThenValidate(t *testing.T) {
	for text, field := range map[string]string{
		"Dienstag um 14 Uhr Reifenwechsel":               "",
		"Reifenwechsel am Sonntag um 10":                 intent.FieldStart,
		"Reifenwechsel Dienstag halb acht":               intent.FieldStart, // 19:30 by the afternoon rule
		"heute um 9 Uhr Ölwechsel":                       intent.FieldStart, // already passed
		"Inspektion Dienstag um 17 Uhr":                  intent.FieldStart, // 90 minutes do not fit
		"Reifenwechsel am Dienstag":                      intent.FieldTime,
		"Dienstag um 14 Uhr":                             intent.FieldService,
		"Reifenwechsel Dienstag oder Mittwoch um 14 Uhr": intent.FieldDate,
		"Bitte stornieren":                               intent.FieldKind,
	} {
		err := intent.Validate(extract(t, text), now, berlin, intent.DemoCatalogue())
		if field == "" {
			require.NoError(t, err, text)
			continue
		}
		var ve *intent.ValidationError
		require.True(t, errors.As(err, &ve), "%q: %v", text, err)
		require.Equal(t, field, ve.Field, text)
	}
}

// TestValidateCatalogueErrors: a catalogue without opening hours is a
// configuration error, not something to ask the customer.
func TestValidateCatalogueErrors(t *testing.T) {
	for name, mutate := range map[string]func(*intent.Catalogue){
		"no hours":     func(c *intent.Catalogue) { c.Opens, c.Closes = "", "" },
		"bad hours":    func(c *intent.Catalogue) { c.Opens = "8 Uhr" },
		"closes first": func(c *intent.Catalogue) { c.Opens, c.Closes = "18:00", "08:00" },
		"no weekdays":  func(c *intent.Catalogue) { c.Weekdays = nil },
		"no duration":  func(c *intent.Catalogue) { c.Services[0].DurationMinutes = 0 },
	} {
		cat := intent.DemoCatalogue()
		mutate(&cat)
		err := intent.Validate(booking(tire, tue14), now, berlin, cat)
		require.Error(t, err, name)
		var ve *intent.ValidationError
		require.False(t, errors.As(err, &ve), name)
	}
	require.Error(t, intent.Validate(booking(tire, tue14), now, nil, intent.DemoCatalogue()))
}

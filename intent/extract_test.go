package intent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
)

const (
	tire = intent.ServiceTireChange
	insp = intent.ServiceInspection
	oil  = intent.ServiceOilChange
)

type extractCase struct {
	text    string
	kind    intent.Kind
	service string
	start   time.Time // zero: no complete start
	ask     bool      // a clarifying question is expected
	lang    string    // "" means "de"
}

var (
	tue14 = at(2026, 12, 1, 14, 0)
	book  = intent.KindBook
	conf  = intent.KindConfirm
	canc  = intent.KindCancel
	uncl  = intent.KindUnclear
	resch = intent.KindReschedule
)

// extractCases are phrasings a workshop hears, at Monday 2026-11-30 10:00.
var extractCases = []extractCase{
	// The brief's examples.
	{text: "Dienstag um 14 Uhr Reifenwechsel", kind: book, service: tire, start: tue14},
	{text: "Ja, Dienstag 14 Uhr passt", kind: conf, start: tue14},
	{text: "Nimm Dienstag um zwei", kind: conf, start: tue14},
	{text: "Ja, der Dienstag-Termin passt", kind: conf},
	{text: "Kann ich morgen früh um 9 zur Inspektion kommen?", kind: book, service: insp, start: at(2026, 12, 1, 9, 0)},
	{text: "tire change next tuesday at 2pm", kind: book, service: tire, start: tue14, lang: "en"},
	{text: "Bitte stornieren", kind: canc},
	// Times.
	{text: "Reifenwechsel am Dienstag, 14:00", kind: book, service: tire, start: tue14},
	{text: "Reifenwechsel Dienstag 14.30 Uhr", kind: book, service: tire, start: at(2026, 12, 1, 14, 30)},
	{text: "Reifenwechsel Dienstag 14.30", kind: book, service: tire, start: at(2026, 12, 1, 14, 30)},
	{text: "Reifenwechsel Dienstag um 14 Uhr 30", kind: book, service: tire, start: at(2026, 12, 1, 14, 30)},
	{text: "Reifenwechsel Dienstag 14h", kind: book, service: tire, start: tue14},
	{text: "Reifenwechsel dienstags 14uhr", kind: book, service: tire, start: tue14},
	{text: "Ölwechsel Donnerstag halb drei", kind: book, service: oil, start: at(2026, 12, 3, 14, 30)},
	{text: "Ölwechsel Donnerstag viertel nach zwei", kind: book, service: oil, start: at(2026, 12, 3, 14, 15)},
	{text: "Ölwechsel Donnerstag viertel vor drei", kind: book, service: oil, start: at(2026, 12, 3, 14, 45)},
	{text: "Ölwechsel Donnerstag dreiviertel drei", kind: book, service: oil, start: at(2026, 12, 3, 14, 45)},
	{text: "Ölwechsel zehn nach zwei am Donnerstag", kind: book, service: oil, start: at(2026, 12, 3, 14, 10)},
	{text: "Ölwechsel Donnerstag halb eins", kind: book, service: oil, start: at(2026, 12, 3, 12, 30)},
	{text: "Ölwechsel um vierzehn Uhr dreißig am Donnerstag", kind: book, service: oil, start: at(2026, 12, 3, 14, 30)},
	{text: "Inspektion Dienstag morgens um 9", kind: book, service: insp, start: at(2026, 12, 1, 9, 0)},
	{text: "Inspektion Dienstag früh um 8", kind: book, service: insp, start: at(2026, 12, 1, 8, 0)},
	{text: "Inspektion am 3.12. 9 Uhr morgens", kind: book, service: insp, start: at(2026, 12, 3, 9, 0)},
	{text: "Reifenwechsel Dienstag mittags", kind: book, service: tire, start: at(2026, 12, 1, 12, 0)},
	{text: "Reifenwechsel Dienstag um eins", kind: book, service: tire, start: at(2026, 12, 1, 13, 0)},
	{text: "Reifenwechsel Dienstag um 07:30", kind: book, service: tire, start: at(2026, 12, 1, 7, 30)},
	{text: "Reifenwechsel Dienstag 2 Uhr nachmittags", kind: book, service: tire, start: tue14},
	{text: "Reifenwechsel um 10 am Dienstag", kind: book, service: tire, start: at(2026, 12, 1, 10, 0)},
	{text: "tire change tuesday 2 pm", kind: book, service: tire, start: tue14, lang: "en"},
	{text: "tire change at 2 p.m. tomorrow", kind: book, service: tire, start: tue14, lang: "en"},
	{text: "tire change at 2 tomorrow", kind: book, service: tire, start: tue14, lang: "en"},
	{text: "tire change tomorrow at 10:30am", kind: book, service: tire, start: at(2026, 12, 1, 10, 30), lang: "en"},
	{text: "tire change at 10 am tuesday", kind: book, service: tire, start: at(2026, 12, 1, 10, 0), lang: "en"},
	{text: "tire change quarter past two tomorrow", kind: book, service: tire, start: at(2026, 12, 1, 14, 15), lang: "en"},
	{text: "tire change half past two tomorrow", kind: book, service: tire, start: at(2026, 12, 1, 14, 30), lang: "en"},
	{text: "tire change tuesday at noon", kind: book, service: tire, start: at(2026, 12, 1, 12, 0), lang: "en"},
	{text: "tire change at 9 o'clock tomorrow", kind: book, service: tire, start: at(2026, 12, 1, 9, 0), lang: "en"},
	{text: "at two thirty on friday oil change", kind: book, service: oil, start: at(2026, 12, 4, 14, 30), lang: "en"},
	{text: "tomorrow morning at 9 tire change", kind: book, service: tire, start: at(2026, 12, 1, 9, 0), lang: "en"},
	// Days.
	{text: "Reifenwechsel Montag um 14 Uhr", kind: book, service: tire, start: at(2026, 11, 30, 14, 0)},
	{text: "Reifenwechsel Montag um 9", kind: book, service: tire, start: at(2026, 12, 7, 9, 0)},
	{text: "Reifenwechsel nächsten Montag um 14 Uhr", kind: book, service: tire, start: at(2026, 12, 7, 14, 0)},
	{text: "Reifenwechsel nächsten Dienstag um 14 Uhr", kind: book, service: tire, start: tue14},
	{text: "Inspektion übernächsten Dienstag um 10", kind: book, service: insp, start: at(2026, 12, 8, 10, 0)},
	{text: "Inspektion Dienstag nächste Woche um 10", kind: book, service: insp, start: at(2026, 12, 8, 10, 0)},
	{text: "oil change next week tuesday 10am", kind: book, service: oil, start: at(2026, 12, 8, 10, 0), lang: "en"},
	{text: "heute um 15 Uhr Ölwechsel", kind: book, service: oil, start: at(2026, 11, 30, 15, 0)},
	{text: "heute Nachmittag um 3 Ölwechsel", kind: book, service: oil, start: at(2026, 11, 30, 15, 0)},
	{text: "Reifenwechseltermin übermorgen 11:15", kind: book, service: tire, start: at(2026, 12, 2, 11, 15)},
	{text: "day after tomorrow at 3 pm inspection", kind: book, service: insp, start: at(2026, 12, 2, 15, 0), lang: "en"},
	{text: "Ölwechsel in 3 Tagen um 10", kind: book, service: oil, start: at(2026, 12, 3, 10, 0)},
	{text: "Ölwechsel am 17. August um halb drei", kind: book, service: oil, start: at(2027, 8, 17, 14, 30)},
	{text: "Oelwechsel 17.08. viertel nach zwei", kind: book, service: oil, start: at(2027, 8, 17, 14, 15)},
	{text: "Inspektion 17.08.2027 um 10 Uhr", kind: book, service: insp, start: at(2027, 8, 17, 10, 0)},
	{text: "oil change August 17 at 10:30am", kind: book, service: oil, start: at(2027, 8, 17, 10, 30), lang: "en"},
	{text: "oil change 17 August at noon", kind: book, service: oil, start: at(2027, 8, 17, 12, 0), lang: "en"},
	{text: "tire change December 1st at 2pm", kind: book, service: tire, start: tue14, lang: "en"},
	{text: "Reifenwechsel 2026-12-01 14:00", kind: book, service: tire, start: tue14},
	{text: "Reifenwechsel 2026-12-01T14:00", kind: book, service: tire, start: tue14},
	{text: "Reifenwechsel am Freitag, den 4.12. um 14:30h", kind: book, service: tire, start: at(2026, 12, 4, 14, 30)},
	{text: "Reifenwechsel nächste Woche Dienstag um 10", kind: book, service: tire, start: at(2026, 12, 8, 10, 0)},
	{text: "Reifenwechsel Freitag, der 13.", kind: book, service: tire, ask: true},
	{text: "Reifenwechsel am 1. Dezember 2026 um 14:00 Uhr", kind: book, service: tire, start: tue14},
	{text: "Reifenwechsel am 1.12.26 um 14:00", kind: book, service: tire, start: tue14},
	{text: "Inspektion Di., 1.12., 10 Uhr", kind: book, service: insp, start: at(2026, 12, 1, 10, 0)},
	{text: "am 17. um 14 Uhr Reifenwechsel", kind: book, service: tire, start: at(2026, 12, 17, 14, 0)},
	{text: "tire change on the 17th at 2pm", kind: book, service: tire, start: at(2026, 12, 17, 14, 0), lang: "en"},
	{text: "Guten Morgen, ich möchte einen Ölwechsel am Mittwoch um 10", kind: book, service: oil, start: at(2026, 12, 2, 10, 0)},
	// Services, spelling and noise.
	{text: "DIENSTAG UM 14 UHR REIFENWECHSEL!!!", kind: book, service: tire, start: tue14},
	{text: "🚗 Reifenwechsel 👍 Dienstag 14 Uhr", kind: book, service: tire, start: tue14},
	{text: "Reifen wechseln am Freitag um 16:30", kind: book, service: tire, start: at(2026, 12, 4, 16, 30)},
	{text: "Winterreifen drauf, Samstag 9 Uhr", kind: book, service: tire, start: at(2026, 12, 5, 9, 0)},
	{text: "I need new tires on monday at 11", kind: book, service: tire, start: at(2026, 11, 30, 11, 0), lang: "en"},
	{text: "Ich würde gerne am Donnerstag um 11 zur Wartung kommen", kind: book, service: insp, start: at(2026, 12, 3, 11, 0)},
	{text: "can I come for an oil change tomorrow at 9 in the morning?", kind: book, service: oil, start: at(2026, 12, 1, 9, 0), lang: "en"},
	{text: "Ich brauche keine Inspektion sondern einen Ölwechsel", kind: book, service: oil, ask: true},
	// Missing parts: asked, never guessed.
	{text: "Ich hätte gern einen Termin", kind: book, ask: true},
	{text: "Reifenwechsel am Dienstag", kind: book, service: tire, ask: true},
	{text: "Reifenwechsel um 14 Uhr", kind: book, service: tire, ask: true},
	{text: "Dienstag um 14 Uhr", kind: book, start: tue14, ask: true},
	{text: "Reifenwechsel nächste Woche", kind: book, service: tire, ask: true},
	{text: "Reifenwechsel Dienstag 14", kind: book, service: tire, ask: true},
	{text: "I'd like to book an appointment", kind: book, ask: true, lang: "en"},
	// Ambiguity: asked, never guessed.
	{text: "Reifenwechsel Montag", kind: book, service: tire, ask: true},
	{text: "Reifenwechsel Dienstag oder Mittwoch um 14 Uhr", kind: book, service: tire, ask: true},
	{text: "Reifenwechsel Dienstag um 14 oder 15 Uhr", kind: book, service: tire, ask: true},
	{text: "Reifenwechsel zwischen 14 und 15 Uhr am Dienstag", kind: book, service: tire, ask: true},
	{text: "Reifenwechsel ab 14 Uhr am Dienstag", kind: book, service: tire, ask: true},
	{text: "Ölwechsel und Inspektion Dienstag 10 Uhr", kind: book, start: at(2026, 12, 1, 10, 0), ask: true},
	{text: "Inspektion Mittwoch, 1.12., 10 Uhr", kind: book, service: insp, ask: true},
	{text: "Inspektion am 31.02. um 10 Uhr", kind: book, service: insp, ask: true},
	{text: "Reifenwechsel Dienstag um 25 Uhr", kind: book, service: tire, ask: true},
	{text: "Reifenwechsel Dienstag morgens oder nachmittags um 3", kind: book, service: tire, ask: true},
	{text: "Dienstag passt nicht, aber Mittwoch um 10 geht", kind: book, start: at(2026, 12, 2, 10, 0), ask: true},
	// Confirmations.
	{text: "okay, nehme ich", kind: conf},
	{text: "Ja passt", kind: conf},
	{text: "ja", kind: conf},
	{text: "ok", kind: conf},
	{text: "einverstanden", kind: conf},
	{text: "gerne", kind: conf},
	{text: "kein Problem, passt", kind: conf},
	{text: "yes", kind: conf, lang: "en"},
	{text: "sounds good", kind: conf, lang: "en"},
	{text: "that works", kind: conf, lang: "en"},
	{text: "yes, tuesday 2pm works for me", kind: conf, start: tue14, lang: "en"},
	// Cancellations and the rest.
	{text: "Ich möchte den Termin absagen", kind: canc},
	{text: "Ich sage den Termin ab", kind: canc},
	{text: "Storniere bitte meinen Reifenwechsel", kind: canc, service: tire},
	{text: "cancel my appointment", kind: canc, lang: "en"},
	{text: "Ich brauche den Termin nicht mehr", kind: canc},
	// Moves: the new slot, or a question for it.
	{text: "Kann ich den Termin auf Mittwoch verschieben?", kind: resch, ask: true},
	{text: "Ich möchte meinen Termin verschieben", kind: resch, ask: true},
	{text: "Können wir auf Donnerstag 10 Uhr verschieben?", kind: resch, start: at(2026, 12, 3, 10, 0)},
	{text: "Bitte verschieben auf Mittwoch 14 Uhr", kind: resch, start: at(2026, 12, 2, 14, 0)},
	{text: "Ich muss den Reifenwechsel auf Freitag um 9 verlegen", kind: resch, service: tire, start: at(2026, 12, 4, 9, 0)},
	{text: "Can we move it to thursday at 10? Please reschedule", kind: resch, start: at(2026, 12, 3, 10, 0), lang: "en"},
	{text: "absagen, lieber Mittwoch um 10", kind: resch, start: at(2026, 12, 2, 10, 0)},
	{text: "Nein", kind: uncl, ask: true},
	{text: "no, tuesday doesn't work", kind: uncl, ask: true, lang: "en"},
	{text: "Ja, aber nicht um 14 Uhr", kind: uncl, ask: true},
	{text: "Hallo", kind: uncl, ask: true},
	{text: "", kind: uncl, ask: true},
}

func TestExtractPhrasings(t *testing.T) {
	require.GreaterOrEqual(t, len(extractCases), 60)
	for _, tc := range extractCases {
		t.Run(tc.text, func(t *testing.T) {
			r := extract(t, tc.text)
			require.Equal(t, tc.kind, r.Kind, "kind; question %q", r.Question)
			require.Equal(t, tc.service, r.Service, "service")
			if tc.start.IsZero() {
				require.True(t, r.Start.IsZero(), "start %v", r.Start)
			} else {
				require.True(t, tc.start.Equal(r.Start), "start %v, want %v", r.Start, tc.start)
				require.Equal(t, berlin, r.Start.Location())
				require.True(t, r.HasDate && r.HasTime)
			}
			if tc.ask {
				require.NotEmpty(t, r.Question)
			} else {
				require.Empty(t, r.Question)
			}
			lang := tc.lang
			if lang == "" {
				lang = "de"
			}
			require.Equal(t, lang, r.Lang)
		})
	}
}

func TestExtractQuestions(t *testing.T) {
	for text, want := range map[string]string{
		"Reifenwechsel am Dienstag":                "Um welche Uhrzeit am Dienstag, 1. Dezember, passt es Ihnen?",
		"Dienstag um 14 Uhr":                       "Für welche Leistung möchten Sie am Dienstag, 1. Dezember, um 14:00 Uhr einen Termin? Wir bieten Reifenwechsel, Inspektion, Ölwechsel.",
		"Ich hätte gern einen Termin":              "Für welche Leistung, an welchem Tag und um welche Uhrzeit möchten Sie einen Termin? Wir bieten Reifenwechsel, Inspektion, Ölwechsel.",
		"Reifenwechsel um 14 Uhr":                  "An welchem Tag passt es Ihnen um 14:00 Uhr?",
		"Reifenwechsel Montag":                     "Meinten Sie Montag, 30. November, oder Montag, 7. Dezember?",
		"Reifenwechsel Dienstag um 14 oder 15 Uhr": "Meinten Sie 14:00 Uhr oder 15:00 Uhr?",
		"Inspektion Mittwoch, 1.12., 10 Uhr":       "Der 1. Dezember ist ein Dienstag, kein Mittwoch. Welchen Tag meinten Sie?",
		"Ölwechsel und Inspektion Dienstag 10 Uhr": "Meinten Sie Ölwechsel oder Inspektion?",
		"tire change tuesday":                      "What time on Tuesday, December 1, works for you?",
		"tuesday at 2pm":                           "Which service would you like on Tuesday, December 1, at 2:00 pm? We offer tire change, inspection, oil change.",
	} {
		require.Equal(t, want, extract(t, text).Question, text)
	}
}

// TestExtractPartial checks the halves a conversation merges across turns.
func TestExtractPartial(t *testing.T) {
	r := extract(t, "Ja, der Dienstag-Termin passt")
	require.True(t, r.HasDate)
	require.False(t, r.HasTime)
	require.True(t, at(2026, 12, 1, 0, 0).Equal(r.Day))

	r = extract(t, "um halb drei")
	require.False(t, r.HasDate)
	require.True(t, r.HasTime)
	require.Equal(t, [2]int{14, 30}, [2]int{r.Hour, r.Minute})
}

// TestExtractTodaysWeekday covers the weekday-is-today rule on a Tuesday.
func TestExtractTodaysWeekday(t *testing.T) {
	tuesday := time.Date(2026, 12, 1, 12, 0, 0, 0, berlin)
	get := func(text string) intent.Result {
		r, err := intent.Rules{}.Extract(context.Background(), text, tuesday, berlin, intent.DemoCatalogue())
		require.NoError(t, err)
		return r
	}
	require.True(t, at(2026, 12, 1, 14, 0).Equal(get("Reifenwechsel Dienstag 14 Uhr").Start), "still ahead: today")
	require.True(t, at(2026, 12, 8, 9, 0).Equal(get("Reifenwechsel Dienstag 9 Uhr").Start), "passed: next week")
	require.True(t, at(2026, 12, 8, 14, 0).Equal(get("Reifenwechsel nächsten Dienstag 14 Uhr").Start), "next: next week")
	require.True(t, at(2026, 12, 8, 14, 0).Equal(get("tire change next tuesday 2pm").Start))
	r := get("Reifenwechsel Dienstag")
	require.False(t, r.HasDate)
	require.Contains(t, r.Question, "8. Dezember")
}

func TestExtractErrors(t *testing.T) {
	_, err := intent.Rules{}.Extract(context.Background(), "ja", now, nil, intent.DemoCatalogue())
	require.Error(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = intent.Rules{}.Extract(ctx, "ja", now, berlin, intent.DemoCatalogue())
	require.ErrorIs(t, err, context.Canceled)
}

// TestExtractResource picks a named resource from the catalogue.
func TestExtractResource(t *testing.T) {
	cat := intent.DemoCatalogue()
	cat.Resources = []string{"Bühne 1", "Bühne 2"}
	r, err := intent.Rules{}.Extract(context.Background(), "Reifenwechsel auf Buehne 2 am Dienstag um 14 Uhr", now, berlin, cat)
	require.NoError(t, err)
	require.Equal(t, "Bühne 2", r.Resource)
	require.True(t, tue14.Equal(r.Start))
}

package intent_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
)

func TestPhoneLikeRegexp(t *testing.T) {
	for _, s := range []string{"+49 171 1234567", "0049 171 1234567", "01711234567", "+491711234567"} {
		require.True(t, phoneLike.MatchString(s), s)
	}
	for _, s := range []string{"2026-11-30T10:00:00+01:00", "17.08.2027", "14:30", "2026-12-01"} {
		require.False(t, phoneLike.MatchString(s), s)
	}
}

func TestLLMExtract(t *testing.T) {
	tue := time.Date(2026, 12, 1, 0, 0, 0, 0, llmLoc)
	tue14 := time.Date(2026, 12, 1, 14, 0, 0, 0, llmLoc)
	sat := time.Date(2026, 12, 5, 0, 0, 0, 0, llmLoc)
	sat930 := time.Date(2026, 12, 5, 9, 30, 0, 0, llmLoc)

	type modelCase struct {
		name   string
		text   string
		status int // 0 means 200
		body   func(t *testing.T) string
		block  bool // the endpoint never answers; the client times out
		// want returns the expected result; fallback cases return the
		// rules' result for the text.
		want func(t *testing.T, text string) intent.Result
		// check runs extra assertions on the result.
		check func(t *testing.T, got intent.Result)
	}
	content := func(c string) func(t *testing.T) string {
		return func(t *testing.T) string { return chatCompletion(t, c) }
	}
	modelAnswer := func(kind, service, date, clock, question, lang string) func(t *testing.T) string {
		return func(t *testing.T) string {
			return chatCompletion(t, answer(t, kind, service, date, clock, question, lang))
		}
	}
	raw := func(b string) func(t *testing.T) string { return func(*testing.T) string { return b } }
	fallback := func(t *testing.T, text string) intent.Result { return rulesResult(t, text) }
	fixed := func(r intent.Result) func(*testing.T, string) intent.Result {
		return func(*testing.T, string) intent.Result { return r }
	}
	// withRulesQuestion: the expected result carries the rules' question.
	withRulesQuestion := func(r intent.Result) func(*testing.T, string) intent.Result {
		return func(t *testing.T, text string) intent.Result {
			q := rulesResult(t, text).Question
			require.NotEmpty(t, q, "the rules must have a question for %q", text)
			r.Question = q
			return r
		}
	}

	cases := []modelCase{
		{
			name: "valid booking",
			text: "Dienstag um 14 Uhr Reifenwechsel",
			body: modelAnswer("book", intent.ServiceTireChange, "2026-12-01", "14:00", "", "de"),
			want: fixed(intent.Result{
				Kind: intent.KindBook, Service: intent.ServiceTireChange, Start: tue14,
				HasDate: true, HasTime: true, Day: tue, Hour: 14, Lang: "de",
			}),
			check: func(t *testing.T, got intent.Result) {
				require.Same(t, llmLoc, got.Start.Location())
				require.NoError(t, intent.Validate(got, llmNow, llmLoc, intent.DemoCatalogue()))
			},
		},
		{
			name: "valid English booking with minutes and padding",
			text: "oil change saturday 9:30 am please",
			body: content(`  {"kind":"BOOK","service":" oil-change ","date":"2026-12-05","time":"09:30","question":"","lang":"en","extra":"ignored"}` + "\n"),
			want: fixed(intent.Result{
				Kind: intent.KindBook, Service: intent.ServiceOilChange, Start: sat930,
				HasDate: true, HasTime: true, Day: sat, Hour: 9, Minute: 30, Lang: "en",
			}),
		},
		{
			name: "unknown service",
			text: "Autowäsche am Dienstag um 14 Uhr",
			body: modelAnswer("book", "car-wash", "2026-12-01", "14:00", "", "de"),
			want: withRulesQuestion(intent.Result{
				Kind: intent.KindBook, Start: tue14, HasDate: true, HasTime: true, Day: tue, Hour: 14, Lang: "de",
			}),
			check: func(t *testing.T, got intent.Result) {
				require.Empty(t, got.Service)
				var ve *intent.ValidationError
				require.ErrorAs(t, intent.Validate(got, llmNow, llmLoc, intent.DemoCatalogue()), &ve)
				require.Equal(t, intent.FieldService, ve.Field)
			},
		},
		{
			name: "service synonym instead of ID is not accepted",
			text: "Reifenwechsel am Dienstag um 14 Uhr",
			body: modelAnswer("book", "Reifenwechsel", "2026-12-01", "14:00", "Für welche Leistung?", "de"),
			want: fixed(intent.Result{
				Kind: intent.KindBook, Start: tue14, HasDate: true, HasTime: true, Day: tue, Hour: 14,
				Question: "Für welche Leistung?", Lang: "de",
			}),
		},
		{
			name: "booking without time and without question asks the rules' question",
			text: "Reifenwechsel am Dienstag",
			body: modelAnswer("book", intent.ServiceTireChange, "2026-12-01", "", "", "de"),
			want: withRulesQuestion(intent.Result{
				Kind: intent.KindBook, Service: intent.ServiceTireChange, HasDate: true, Day: tue, Lang: "de",
			}),
			check: func(t *testing.T, got intent.Result) {
				require.True(t, got.Start.IsZero())
				require.Contains(t, got.Question, "Uhrzeit")
			},
		},
		{
			name: "the model's own question is kept",
			text: "Reifenwechsel am Dienstag",
			body: modelAnswer("book", intent.ServiceTireChange, "2026-12-01", "", "Um wie viel Uhr am Dienstag?", "de"),
			want: fixed(intent.Result{
				Kind: intent.KindBook, Service: intent.ServiceTireChange, HasDate: true, Day: tue,
				Question: "Um wie viel Uhr am Dienstag?", Lang: "de",
			}),
		},
		{
			name: "unknown kind is unclear with the rules' question",
			text: "Guten Tag, eine Frage",
			body: modelAnswer("move", "", "", "", "", "de"),
			want: withRulesQuestion(intent.Result{Kind: intent.KindUnclear, Lang: "de"}),
		},
		{
			name: "a move without its new slot asks for it",
			text: "Guten Tag, eine Frage",
			body: modelAnswer("reschedule", "", "", "", "", "de"),
			want: fixed(intent.Result{Kind: intent.KindReschedule, Lang: "de", Question: "Auf welchen Tag und welche Uhrzeit sollen wir Ihren Termin verschieben?"}),
		},
		{
			name: "a move with its new slot is a reschedule",
			text: "Können wir auf Dienstag 14 Uhr verschieben?",
			body: modelAnswer("reschedule", "", "2026-12-01", "14:00", "", "de"),
			want: fixed(intent.Result{Kind: intent.KindReschedule, Start: tue14, HasDate: true, HasTime: true, Day: tue, Hour: 14, Lang: "de"}),
		},
		{
			// Rules reads this as a confirmation without a question, so
			// the generic question is asked.
			name: "unclear without any question asks what the customer wants",
			text: "Hallo, wie geht es?",
			body: modelAnswer("unclear", "", "", "", "", "de"),
			want: fixed(intent.Result{
				Kind: intent.KindUnclear, Question: "Möchten Sie einen Termin buchen, bestätigen oder stornieren?", Lang: "de",
			}),
		},
		{
			name: "cancel",
			text: "Bitte stornieren",
			body: modelAnswer("cancel", "", "", "", "", "de"),
			want: fixed(intent.Result{Kind: intent.KindCancel, Lang: "de"}),
		},
		{
			name: "confirmation carries no missing question",
			text: "Ja, passt",
			body: modelAnswer("confirm", "", "", "", "", "de"),
			want: fixed(intent.Result{Kind: intent.KindConfirm, Lang: "de"}),
		},
		{
			name: "wall clock in the daylight saving gap is not a start",
			text: "Reifenwechsel am 28.03.2027 um 2:30 Uhr morgens",
			body: modelAnswer("book", intent.ServiceTireChange, "2027-03-28", "02:30", "", "de"),
			want: func(t *testing.T, text string) intent.Result {
				return intent.Result{
					Kind: intent.KindBook, Service: intent.ServiceTireChange, HasDate: true,
					Day: time.Date(2027, 3, 28, 0, 0, 0, 0, llmLoc), Hour: 2, Minute: 30,
					Question: "Welche Uhrzeit meinten Sie genau?", Lang: "de",
				}
			},
		},
		{
			name: "lang outside de/en is detected from the text",
			text: "tire change tuesday at 2pm",
			body: modelAnswer("book", intent.ServiceTireChange, "2026-12-01", "14:00", "", "fr"),
			want: fixed(intent.Result{
				Kind: intent.KindBook, Service: intent.ServiceTireChange, Start: tue14,
				HasDate: true, HasTime: true, Day: tue, Hour: 14, Lang: "en",
			}),
		},
		// Fallbacks: the result is exactly what Rules says. The model's
		// nonsense would say something else.
		{name: "invalid JSON", text: "Dienstag um 14 Uhr Reifenwechsel", body: content(`kind: book, service: oil-change`), want: fallback},
		{name: "JSON in a code fence", text: "Dienstag um 14 Uhr Reifenwechsel", body: content("```json\n" + `{"kind":"cancel"}` + "\n```"), want: fallback},
		{name: "trailing data after the object", text: "Dienstag um 14 Uhr Reifenwechsel", body: content(`{"kind":"cancel"} {"kind":"book"}`), want: fallback},
		{name: "JSON array", text: "Dienstag um 14 Uhr Reifenwechsel", body: content(`[{"kind":"cancel"}]`), want: fallback},
		{name: "answer without kind", text: "Dienstag um 14 Uhr Reifenwechsel", body: content(`{"service":"oil-change"}`), want: fallback},
		{name: "non-string field", text: "Dienstag um 14 Uhr Reifenwechsel", body: content(`{"kind":"book","time":14}`), want: fallback},
		{name: "empty content", text: "Dienstag um 14 Uhr Reifenwechsel", body: content(""), want: fallback},
		{name: "date does not exist", text: "Reifenwechsel am 30. Februar um 14 Uhr", body: modelAnswer("book", intent.ServiceTireChange, "2027-02-30", "14:00", "", "de"), want: fallback},
		{name: "date in another format", text: "Reifenwechsel am 1.12. um 14 Uhr", body: modelAnswer("book", intent.ServiceTireChange, "01.12.2026", "14:00", "", "de"), want: fallback},
		{name: "time does not exist", text: "Reifenwechsel Dienstag 14 Uhr", body: modelAnswer("book", intent.ServiceTireChange, "2026-12-01", "25:00", "", "de"), want: fallback},
		{name: "time with seconds", text: "Reifenwechsel Dienstag 14 Uhr", body: modelAnswer("book", intent.ServiceTireChange, "2026-12-01", "14:00:00", "", "de"), want: fallback},
		{name: "server error", text: "Dienstag um 14 Uhr Reifenwechsel", status: http.StatusInternalServerError, body: modelAnswer("cancel", "", "", "", "", "de"), want: fallback},
		{name: "unauthorized", text: "Dienstag um 14 Uhr Reifenwechsel", status: http.StatusUnauthorized, body: raw(`{"error":{"message":"invalid api key","type":"invalid_request_error"}}`), want: fallback},
		{name: "redirect status", text: "Dienstag um 14 Uhr Reifenwechsel", status: http.StatusNotModified, body: raw(""), want: fallback},
		{name: "no choices", text: "Dienstag um 14 Uhr Reifenwechsel", body: raw(`{"id":"x","object":"chat.completion","choices":[]}`), want: fallback},
		{name: "null content (refusal)", text: "Dienstag um 14 Uhr Reifenwechsel", body: raw(`{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"no"},"finish_reason":"stop"}]}`), want: fallback},
		{name: "response is not JSON", text: "Dienstag um 14 Uhr Reifenwechsel", body: raw(`<html>Bad Gateway</html>`), want: fallback},
		{name: "timeout", text: "Dienstag um 14 Uhr Reifenwechsel", block: true, want: fallback},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status := tc.status
			if status == 0 {
				status = http.StatusOK
			}
			var body string
			if tc.body != nil {
				body = tc.body(t)
			}
			srv, got := fakeModel(t, status, body, tc.block)
			client := srv.Client()
			if tc.block {
				// The client gives up; the handler blocks until it does.
				client.Timeout = 200 * time.Millisecond
			}
			l := intent.LLM{BaseURL: srv.URL + "/v1/", APIKey: llmKey, Model: llmModel, HTTP: client}

			res, err := l.Extract(context.Background(), tc.text, llmNow, llmLoc, intent.DemoCatalogue())
			require.NoError(t, err)
			require.Equal(t, tc.want(t, tc.text), res)
			if tc.check != nil {
				tc.check(t, res)
			}
			select {
			case req := <-got:
				checkRequest(t, req, tc.text)
			default:
				t.Fatal("the model endpoint was not called")
			}
		})
	}
}

// stubExtractor answers a fixed result, so a test can tell it apart.

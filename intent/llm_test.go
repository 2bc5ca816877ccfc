package intent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
)

const (
	llmKey   = "sk-test-secret"
	llmModel = "test-model"
)

// llmLoc and llmNow: Monday, 30 November 2026, 10:00 in Berlin, so
// "Dienstag" is 1 December.
var (
	llmLoc = func() *time.Location {
		loc, err := time.LoadLocation("Europe/Berlin")
		if err != nil {
			panic(err)
		}
		return loc
	}()
	llmNow = time.Date(2026, 11, 30, 10, 0, 0, 0, llmLoc)
)

// phoneLike matches international (+49 ..., 0049 ...) numbers and any run
// of seven or more digits; the RFC 3339 reference time and ISO dates in the
// prompt do not match.
var phoneLike = regexp.MustCompile(`(?:\+|\b00)\d[\d ()/-]{5,}\d|\d{7,}`)

// capturedRequest is what the fake endpoint received.
type capturedRequest struct {
	method, path, auth, contentType string
	body                            []byte
}

// chatCompletion wraps content in the chat completions wire format.
func chatCompletion(t *testing.T, content string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"id":      "chatcmpl-test",
		"object":  "chat.completion",
		"created": 1764493200,
		"model":   llmModel,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content},
			"finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
	require.NoError(t, err)
	return string(b)
}

// answer is the model's JSON object.
func answer(t *testing.T, kind, service, date, clock, question, lang string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{
		"kind": kind, "service": service, "date": date, "time": clock, "question": question, "lang": lang,
	})
	require.NoError(t, err)
	return string(b)
}

func rulesResult(t *testing.T, text string) intent.Result {
	t.Helper()
	r, err := intent.Rules{}.Extract(context.Background(), text, llmNow, llmLoc, intent.DemoCatalogue())
	require.NoError(t, err)
	return r
}

// fakeModel starts an OpenAI-compatible endpoint. reply answers after the
// request was captured; with block it instead waits until the client gives
// up (or the test ends).
func fakeModel(t *testing.T, status int, body string, block bool) (*httptest.Server, <-chan capturedRequest) {
	t.Helper()
	got := make(chan capturedRequest, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case got <- capturedRequest{method: r.Method, path: r.URL.Path, auth: r.Header.Get("Authorization"), contentType: r.Header.Get("Content-Type"), body: b}:
		default: // a second request; the test sees only the first
		}
		if block {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	return srv, got
}

// checkRequest asserts the wire format of the model call.
func checkRequest(t *testing.T, req capturedRequest, text string) {
	t.Helper()
	require.Equal(t, http.MethodPost, req.method)
	require.Equal(t, "/v1/chat/completions", req.path)
	require.Equal(t, "Bearer "+llmKey, req.auth)
	require.Equal(t, "application/json", req.contentType)
	require.NotContains(t, string(req.body), llmKey, "the API key goes only into the header")

	var body struct {
		Model          string                `json:"model"`
		Temperature    *float64              `json:"temperature"`
		ResponseFormat struct{ Type string } `json:"response_format"`
		Messages       []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(req.body, &body))
	require.Equal(t, llmModel, body.Model)
	require.NotNil(t, body.Temperature, "temperature must be sent explicitly")
	require.Zero(t, *body.Temperature)
	require.Equal(t, "json_object", body.ResponseFormat.Type)
	require.Len(t, body.Messages, 2)
	require.Equal(t, "system", body.Messages[0].Role)
	require.Equal(t, "user", body.Messages[1].Role)
	require.Equal(t, text, body.Messages[1].Content)

	system := body.Messages[0].Content
	require.Contains(t, system, "2026-11-30T10:00:00+01:00", "reference time in RFC 3339")
	require.Contains(t, system, "Monday", "reference weekday")
	require.Contains(t, system, "Europe/Berlin", "time zone")
	require.Contains(t, system, "JSON")
	for _, s := range intent.DemoCatalogue().Services {
		require.Contains(t, system, s.ID)
		require.Contains(t, system, s.Names[0])
	}
	require.False(t, phoneLike.Match(req.body), "phone-like string in the request: %q", phoneLike.Find(req.body))
}

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
			body: modelAnswer("reschedule", "", "", "", "", "de"),
			want: withRulesQuestion(intent.Result{Kind: intent.KindUnclear, Lang: "de"}),
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
type stubExtractor struct {
	res   intent.Result
	calls *int
}

func (s stubExtractor) Extract(context.Context, string, time.Time, *time.Location, intent.Catalogue) (intent.Result, error) {
	*s.calls++
	return s.res, nil
}

func TestLLMFallbackAndErrors(t *testing.T) {
	const text = "Dienstag um 14 Uhr Reifenwechsel"
	cat := intent.DemoCatalogue()

	t.Run("custom fallback on server error", func(t *testing.T) {
		srv, _ := fakeModel(t, http.StatusBadGateway, "", false)
		calls := 0
		marker := intent.Result{Kind: intent.KindUnclear, Question: "stub", Lang: "de"}
		l := intent.LLM{BaseURL: srv.URL, APIKey: llmKey, Model: llmModel, HTTP: srv.Client(), Fallback: stubExtractor{marker, &calls}}
		res, err := l.Extract(context.Background(), text, llmNow, llmLoc, cat)
		require.NoError(t, err)
		require.Equal(t, marker, res)
		require.Equal(t, 1, calls)
	})
	t.Run("custom fallback is not used when the model answers", func(t *testing.T) {
		srv, _ := fakeModel(t, http.StatusOK, chatCompletion(t, answer(t, "cancel", "", "", "", "", "de")), false)
		calls := 0
		l := intent.LLM{BaseURL: srv.URL, Model: llmModel, HTTP: srv.Client(), Fallback: stubExtractor{intent.Result{}, &calls}}
		res, err := l.Extract(context.Background(), text, llmNow, llmLoc, cat)
		require.NoError(t, err)
		require.Equal(t, intent.KindCancel, res.Kind)
		require.Zero(t, calls)
	})
	t.Run("no API key sends no Authorization header", func(t *testing.T) {
		srv, got := fakeModel(t, http.StatusOK, chatCompletion(t, answer(t, "cancel", "", "", "", "", "de")), false)
		l := intent.LLM{BaseURL: srv.URL, Model: llmModel, HTTP: srv.Client()}
		_, err := l.Extract(context.Background(), text, llmNow, llmLoc, cat)
		require.NoError(t, err)
		req := <-got
		require.Equal(t, "/chat/completions", req.path)
		require.Empty(t, req.auth)
	})
	t.Run("unconfigured means rules, without a call", func(t *testing.T) {
		res, err := intent.LLM{}.Extract(context.Background(), text, llmNow, llmLoc, cat)
		require.NoError(t, err)
		require.Equal(t, rulesResult(t, text), res)
	})
	t.Run("unreachable endpoint", func(t *testing.T) {
		srv, _ := fakeModel(t, http.StatusOK, "", false)
		url := srv.URL
		srv.Close()
		res, err := intent.LLM{BaseURL: url, Model: llmModel, HTTP: &http.Client{}}.Extract(context.Background(), text, llmNow, llmLoc, cat)
		require.NoError(t, err)
		require.Equal(t, rulesResult(t, text), res)
	})
	t.Run("cancelled context is an error, like Rules", func(t *testing.T) {
		srv, got := fakeModel(t, http.StatusOK, "", false)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := intent.LLM{BaseURL: srv.URL, Model: llmModel, HTTP: srv.Client()}.Extract(ctx, text, llmNow, llmLoc, cat)
		require.ErrorIs(t, err, context.Canceled)
		require.Empty(t, got, "no call with a cancelled context")
	})
	t.Run("caller cancelling during the call is an error, not a guess", func(t *testing.T) {
		srv, got := fakeModel(t, http.StatusOK, "", true)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-got // the request arrived; the handler now blocks
			cancel()
		}()
		_, err := intent.LLM{BaseURL: srv.URL, Model: llmModel, HTTP: srv.Client()}.Extract(ctx, text, llmNow, llmLoc, cat)
		require.True(t, errors.Is(err, context.Canceled), "got %v", err)
	})
	t.Run("nil location", func(t *testing.T) {
		_, err := intent.LLM{BaseURL: "http://127.0.0.1:1"}.Extract(context.Background(), text, llmNow, nil, cat)
		require.Error(t, err)
	})
	t.Run("prompt lists a custom catalogue", func(t *testing.T) {
		srv, got := fakeModel(t, http.StatusOK, chatCompletion(t, answer(t, "book", "wash", "2026-12-01", "14:00", "", "de")), false)
		custom := intent.Catalogue{Tenant: "t", Services: []intent.Service{{ID: "wash", Names: []string{"Wäsche", "car wash"}, DurationMinutes: 20}}}
		res, err := intent.LLM{BaseURL: srv.URL, Model: llmModel, HTTP: srv.Client()}.Extract(context.Background(), "Wäsche Dienstag 14 Uhr", llmNow, llmLoc, custom)
		require.NoError(t, err)
		require.Equal(t, "wash", res.Service)
		req := <-got
		require.True(t, strings.Contains(string(req.body), "wash: Wäsche, car wash") ||
			strings.Contains(string(req.body), `wash: W\u00e4sche, car wash`), string(req.body))
		require.NotContains(t, string(req.body), intent.ServiceTireChange)
	})
}

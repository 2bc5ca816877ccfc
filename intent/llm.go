package intent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/bookonce/bookonce/internal/tracing"
)

// LLM is an Extractor that asks an OpenAI-compatible chat completions
// endpoint (POST {BaseURL}/chat/completions) to read the message. It is off
// by default: the app uses it only when it is configured.
//
// The model's answer is untrusted. It is parsed strictly against the
// catalogue and the reference time, and whenever the call fails (network
// error, timeout, non-2xx status) or the answer is not the JSON object the
// prompt demands, the result comes from Fallback instead. A model outage
// therefore degrades to the deterministic rules, never to a wrong booking;
// Validate still runs on whatever comes out.
//
// Only the message text is sent to the model, together with the catalogue
// and the reference time; nothing is logged.
type LLM struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1"; empty
	// means the model is not configured and Fallback answers.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <APIKey>" when not empty.
	APIKey string
	// Model is the model name sent with each request.
	Model string
	// HTTP is the client for the model call; nil means a client with a
	// 15 second timeout.
	HTTP *http.Client
	// Fallback reads the message when the model call fails or answers
	// nonsense; nil means Rules{}.
	Fallback Extractor
}

var _ Extractor = LLM{}

// llmTimeout bounds the model call of the default client.
const llmTimeout = 15 * time.Second

// llmMaxResponse bounds how much of the endpoint's answer is read.
const llmMaxResponse = 1 << 20

// llmMaxQuestion bounds a clarifying question taken from the model, in
// runes; longer ones are replaced by the rules' question.
const llmMaxQuestion = 400

// defaultLLMClient is the client of an LLM without one: bounded, and
// traced when tracing is on (built per call, after the process set
// tracing up; the transport underneath is the shared default).
func defaultLLMClient() *http.Client {
	return &http.Client{Timeout: llmTimeout, Transport: tracing.Transport(nil)}
}

// Extract asks the model and returns its answer as a Result, or Fallback's
// result when the model cannot be used. Like Rules, it returns an error
// only for a cancelled context, a nil location, or an error of Fallback.
func (l LLM) Extract(ctx context.Context, text string, now time.Time, loc *time.Location, cat Catalogue) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if loc == nil {
		return Result{}, errors.New("intent: nil location")
	}
	now = now.In(loc)
	if strings.TrimSpace(l.BaseURL) == "" {
		return l.fallback(ctx, text, now, loc, cat)
	}
	content, err := l.complete(ctx, text, now, loc, cat)
	if err != nil {
		return l.fallback(ctx, text, now, loc, cat)
	}
	ans, err := parseLLMAnswer(content)
	if err != nil {
		return l.fallback(ctx, text, now, loc, cat)
	}
	res, ok := ans.result(ctx, text, now, loc, cat)
	if !ok {
		return l.fallback(ctx, text, now, loc, cat)
	}
	return res, nil
}

func (l LLM) fallback(ctx context.Context, text string, now time.Time, loc *time.Location, cat Catalogue) (Result, error) {
	if l.Fallback != nil {
		return l.Fallback.Extract(ctx, text, now, loc, cat)
	}
	return Rules{}.Extract(ctx, text, now, loc, cat)
}

// Wire format of the chat completions endpoint (the parts used here).
type (
	chatMessage struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	chatResponseFormat struct {
		Type string `json:"type"`
	}
	chatRequest struct {
		Model          string             `json:"model"`
		Messages       []chatMessage      `json:"messages"`
		Temperature    float64            `json:"temperature"` // no omitempty: 0 must be sent
		ResponseFormat chatResponseFormat `json:"response_format"`
	}
	chatResponse struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
)

// complete sends one chat completion and returns the first choice's
// content.
func (l LLM) complete(ctx context.Context, text string, now time.Time, loc *time.Location, cat Catalogue) (string, error) {
	body, err := json.Marshal(chatRequest{
		Model: l.Model,
		Messages: []chatMessage{
			{Role: "system", Content: llmSystemPrompt(now, loc, cat)},
			{Role: "user", Content: text},
		},
		Temperature:    0,
		ResponseFormat: chatResponseFormat{Type: "json_object"},
	})
	if err != nil {
		return "", err
	}
	url := strings.TrimRight(strings.TrimSpace(l.BaseURL), "/") + "/chat/completions"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if l.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+l.APIKey)
	}
	client := l.HTTP
	if client == nil {
		client = defaultLLMClient()
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, llmMaxResponse+1))
	if err != nil {
		return "", err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// The status only; the body may echo the request.
		return "", fmt.Errorf("intent: model endpoint answered %s", resp.Status)
	}
	if len(raw) > llmMaxResponse {
		return "", errors.New("intent: model response too large")
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return "", fmt.Errorf("intent: model response: %w", err)
	}
	if len(cr.Choices) == 0 || cr.Choices[0].Message.Content == nil {
		return "", errors.New("intent: model response without content")
	}
	return *cr.Choices[0].Message.Content, nil
}

// llmSystemPrompt tells the model the reference time, the catalogue and
// the exact answer format.
func llmSystemPrompt(now time.Time, loc *time.Location, cat Catalogue) string {
	var b strings.Builder
	b.WriteString("You read one message a customer sent to a car workshop (WhatsApp text or German speech-to-text) " +
		"and extract a booking intent. Answer with exactly one JSON object and nothing else.\n\n")
	fmt.Fprintf(&b, "Reference time (now): %s, %s\n", now.Weekday(), now.Format(time.RFC3339))
	fmt.Fprintf(&b, "Time zone: %s\n", loc.String())
	b.WriteString("Calendar of the coming days:\n")
	today := civilOf(now)
	for i := 0; i < 15; i++ {
		d := today.add(i)
		fmt.Fprintf(&b, "- %s %04d-%02d-%02d", d.weekday(), d.y, d.m, d.d)
		switch i {
		case 0:
			b.WriteString(" (today)")
		case 1:
			b.WriteString(" (tomorrow)")
		}
		b.WriteString("\n")
	}
	b.WriteString("\nServices (id: synonyms):\n")
	for _, s := range cat.Services {
		fmt.Fprintf(&b, "- %s: %s\n", s.ID, strings.Join(s.Names, ", "))
	}
	if cat.Opens != "" && cat.Closes != "" && len(cat.Weekdays) > 0 {
		days := make([]string, len(cat.Weekdays))
		for i, d := range cat.Weekdays {
			days[i] = d.String()
		}
		fmt.Fprintf(&b, "Opening hours: %s, %s-%s\n", strings.Join(days, ", "), cat.Opens, cat.Closes)
	}
	b.WriteString(`
Answer format (all fields required, strings only):
{"kind":"book|confirm|cancel|reschedule|unclear","service":"<service id from the list above or empty>","date":"YYYY-MM-DD or empty","time":"HH:MM or empty","question":"clarifying question in the customer's language or empty","lang":"de|en"}

Rules:
- kind: "book" asks for a new appointment; "confirm" accepts an offered slot ("ja, passt", "okay, nehme ich"); "cancel" cancels an appointment; "reschedule" moves an existing appointment to the date and time named (the new slot); "unclear" is anything else.
- service: only an id from the list above, never a synonym or anything else; empty if none or more than one service was named.
- date: the calendar day the customer means, resolved against the reference time and calendar above; a bare weekday is the coming one. Empty if no day was named.
- time: 24-hour wall clock in the time zone above. A bare hour from 1 to 7 without "morgens", "früh", "vormittags" or "am" means the afternoon (the workshop is open during the day). Empty if no time was named.
- Never guess: if something is missing, ambiguous (two days, two times, a time range, two services) or contradictory, leave that field empty and ask about it in "question".
- question: one short clarifying question in the customer's language, or empty when nothing needs to be asked.
- lang: "en" if the message is English, otherwise "de".
`)
	return b.String()
}

// llmAnswer is the JSON object the prompt demands. Pointers tell a
// missing field from an empty one.
type llmAnswer struct {
	Kind     *string `json:"kind"`
	Service  *string `json:"service"`
	Date     *string `json:"date"`
	Time     *string `json:"time"`
	Question *string `json:"question"`
	Lang     *string `json:"lang"`
}

// parseLLMAnswer accepts exactly one JSON object with string (or null)
// fields and a kind; anything else is an error.
func parseLLMAnswer(content string) (llmAnswer, error) {
	var a llmAnswer
	dec := json.NewDecoder(strings.NewReader(content))
	if err := dec.Decode(&a); err != nil {
		return llmAnswer{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return llmAnswer{}, errors.New("intent: trailing data after the model's JSON object")
	}
	if a.Kind == nil {
		return llmAnswer{}, errors.New("intent: model answer without kind")
	}
	return a, nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

// result turns the answer into a Result. It reports false when the answer
// is nonsense (a date or time that does not parse), so the caller falls
// back instead of guessing.
func (a llmAnswer) result(ctx context.Context, text string, now time.Time, loc *time.Location, cat Catalogue) (Result, bool) {
	res := a.classify(text, cat)
	q := questions{lang: res.Lang, year: now.Year(), cat: cat}
	day, ok := a.when(&res, loc)
	if !ok {
		return Result{}, false
	}
	question := str(a.Question)
	if utf8.RuneCountInString(question) > llmMaxQuestion || !printable(question) {
		question = ""
	}
	if res.HasDate && res.HasTime && !res.setStart(day, loc) && question == "" {
		question = q.invalidTime()
	}

	if res.Kind == KindReschedule && res.Start.IsZero() && question == "" {
		question = q.rescheduleWhen() // a move needs its new slot
	}
	missing := res.Service == "" || !res.HasDate || !res.HasTime
	if question == "" && (res.Kind == KindUnclear || res.Kind == KindBook && missing) {
		question = fallbackQuestion(ctx, text, now, loc, res, day, q)
	}
	res.Question = question
	return res, true
}

// classify reads the answer's kind, service and language into a Result;
// an unknown kind is unclear, a service the catalogue lacks is dropped,
// and an unknown language is detected from text.
func (a llmAnswer) classify(text string, cat Catalogue) Result {
	var res Result
	switch k := Kind(strings.ToLower(str(a.Kind))); k {
	case KindBook, KindConfirm, KindCancel, KindReschedule, KindUnclear:
		res.Kind = k
	default:
		res.Kind = KindUnclear
	}
	if id := str(a.Service); id != "" {
		if _, ok := cat.Service(id); ok {
			res.Service = id
		}
	}
	switch l := strings.ToLower(str(a.Lang)); l {
	case "de", "en":
		res.Lang = l
	default:
		res.Lang = detectLang(tokenize(text))
	}
	return res
}

// when reads the answer's date and time into res and returns the day; it
// reports false when either does not parse.
func (a llmAnswer) when(res *Result, loc *time.Location) (civil, bool) {
	var day civil
	if s := str(a.Date); s != "" {
		d, err := time.ParseInLocation("2006-01-02", s, loc)
		if err != nil {
			return civil{}, false
		}
		day = civil{d.Year(), d.Month(), d.Day()}
		res.HasDate, res.Day = true, time.Date(day.y, day.m, day.d, 0, 0, 0, 0, loc)
	}
	if s := str(a.Time); s != "" {
		t, err := time.Parse("15:04", s)
		if err != nil {
			return civil{}, false
		}
		res.HasTime, res.Hour, res.Minute = true, t.Hour(), t.Minute()
	}
	return day, true
}

// fallbackQuestion is the question for an answer the model left without a
// usable one: the rules' question for the same text, else what res lacks.
func fallbackQuestion(ctx context.Context, text string, now time.Time, loc *time.Location, res Result, day civil, q questions) string {
	// The rules' question for the same text; pure computation, so it
	// runs even if ctx ended during the model call.
	if rr, err := (Rules{}).Extract(context.WithoutCancel(ctx), text, now, loc, q.cat); err == nil && rr.Question != "" {
		return rr.Question
	}
	if res.Kind == KindUnclear {
		return q.unclear()
	}
	return q.missingFor(res, day)
}

// printable reports whether s has no control characters other than
// newlines, so a model cannot smuggle terminal escapes to the customer.
func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n') {
			return false
		}
	}
	return true
}

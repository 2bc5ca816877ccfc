package intent_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
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

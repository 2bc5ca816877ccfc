package intent_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
)

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

package drill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// changeTries bounds the posts of one API change; with the backoff
// doubling from 250 ms up to 5 s they span about two minutes: longer
// than a PostgreSQL or Temporal restart, and than a refund retried
// through an API kill.
const changeTries = 30

// post sends one API change under key until it has a final answer: 200,
// or a 4xx other than 404 (404 may be a lifecycle not yet found after a
// restart; 504 pending and 5xx are repeated under the same key, as the
// API asks).
func (c *changer) post(ctx context.Context, a *appliedChange, key string) {
	path := fmt.Sprintf("%s/v1/appointments/%s/%s", c.e.staffURL, url.PathEscape(a.workflowID), a.change.Kind)
	body := map[string]any{"reason": changeReason}
	if a.change.Kind == Reschedule {
		body = map[string]any{"start": a.change.To.UTC().Format(time.RFC3339)}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		c.record(a, "marshal: "+err.Error(), true, false)
		return
	}
	backoff := 250 * time.Millisecond
	answer := "no answer"
	for try := range changeTries {
		if try > 0 {
			select {
			case <-ctx.Done():
				c.record(a, answer, true, false)
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
		}
		c.e.db.wait(ctx)
		status, code := c.postOnce(ctx, path, key, raw)
		answer = strings.TrimSpace(fmt.Sprintf("%d %s", status, code))
		if status == 0 {
			answer = "no answer (" + code + ")"
		}
		final := status == http.StatusOK || (status >= 400 && status < 500 && (status != http.StatusNotFound || code == ""))
		if final {
			c.record(a, answer, status != http.StatusOK && !(status == http.StatusConflict && code == "slot_unavailable"),
				status == http.StatusConflict && code == "slot_unavailable")
			return
		}
	}
	c.record(a, answer, true, false)
}

// postOnce is one POST; it returns the status and the problem's code (or
// the transport error).
func (c *changer) postOnce(ctx context.Context, path, key string, body []byte) (int, string) {
	c.mu.Lock()
	c.posts++
	c.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return 0, err.Error()
	}
	if resp.StatusCode == http.StatusOK {
		var st lifecycle.State
		if json.Unmarshal(b, &st) != nil || st.Status == "" {
			return resp.StatusCode, "unreadable state"
		}
		return resp.StatusCode, ""
	}
	var p struct {
		Code string `json:"code"`
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") && json.Unmarshal(b, &p) == nil {
		return resp.StatusCode, p.Code
	}
	return resp.StatusCode, "" // not the API's problem: no such route
}

// record keeps a post's final answer; unanswered: the change got no
// answer it could act on, refused: the new slot was taken.
func (c *changer) record(a *appliedChange, answer string, unanswered, refused bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answers[answer]++
	a.answer = answer
	a.unanswered = a.unanswered || unanswered
	a.refused = a.refused || refused
}

package drill

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/idempotency"
)

// agentAttempts and agentMaxBackoff bound the posts of one tool call:
// backing off from 200 ms, doubling up to 5 s, they span about 100 s,
// beyond the lease a call holds its key for (stack.AgentLease, 30 s) even
// when the gateway holding it is killed twice in a row: a call whose
// answer could not be stored keeps its key in flight (409) until the
// lease ends, and the platform keeps retrying meanwhile.
const (
	agentAttempts   = 24
	agentMaxBackoff = 5 * time.Second
)

// post sends one tool call under key, retried with backoff on a lost
// answer, a 5xx, a key still in flight (409) or a tool error that says
// the same call may be repeated (422 tool_error). It decodes a 200 into
// out. The returned status is the last one seen.
func (c *agentCustomer) post(ctx context.Context, tool, key string, args, out any) (string, bool) {
	body, err := json.Marshal(args)
	if err != nil {
		return "marshal", false
	}
	backoff := 200 * time.Millisecond
	status := ""
	for attempt := range agentAttempts {
		if attempt > 0 {
			c.count(func(t *AgentTraffic) { t.KeyRetries++ })
			select {
			case <-ctx.Done():
				return status, false
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, agentMaxBackoff)
		}
		c.db.wait(ctx)
		code, replayed, resp := c.postOnce(ctx, tool, key, body)
		status = code
		c.count(func(t *AgentTraffic) {
			t.Posts++
			t.PostsByStatus[code]++
			if replayed {
				t.Replayed++
			}
		})
		switch code {
		case "200":
			return status, json.Unmarshal(resp, out) == nil
		case "400", "404":
			return status, false // the drill's own mistake: retrying will not help
		}
		if code == "422" && bytes.Contains(resp, []byte("operation_refused")) {
			return status, true // final under this key; the answer has no booking status
		}
	}
	return status, false
}

// postOnce posts once and returns the status ("transport" without an
// answer), whether the answer was replayed, and the body.
func (c *agentCustomer) postOnce(ctx context.Context, tool, key string, body []byte) (string, bool, []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+agent.RouteTools+"/"+tool, bytes.NewReader(body))
	if err != nil {
		return "transport", false, nil
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(idempotency.HeaderKey, key)
	resp, err := c.http.Do(req)
	if err != nil {
		return "transport", false, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "transport", false, nil
	}
	return strconv.Itoa(resp.StatusCode), resp.Header.Get(idempotency.HeaderReplayed) == "true", b
}

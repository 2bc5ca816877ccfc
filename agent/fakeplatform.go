package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"time"
)

// ToolCall is one function call the model made, under its tool-call ID.
type ToolCall struct {
	ID   string
	Name ToolName
	Args map[string]any
}

// NewToolCall is a tool call under a fresh ID, as the model makes one.
func NewToolCall(name ToolName, args map[string]any) ToolCall {
	return ToolCall{ID: "call_" + randomHex(12), Name: name, Args: args}
}

// post sends one delivery as a platform's sender does and reads the
// answer; a request not answered within timeout fails.
func post(ctx context.Context, client *http.Client, url string, h http.Header, body []byte, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = h
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func uuid() string {
	h := randomHex(16)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

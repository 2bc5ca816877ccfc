package agent

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// VapiDefaultTimeout is how long Vapi waits for a tool's server before it
// gives up on the call (the server's timeoutSeconds default).
const VapiDefaultTimeout = 20 * time.Second

// FakeVapi sends tool calls the way Vapi's servers do: one POST of the
// "tool-calls" server message per model turn, carrying every tool call of
// that turn, with the server's Bearer Token credential (the tenant's API
// token) and, with Secret, the HMAC credential's signature (Vapi's
// defaults: X-Signature, X-Timestamp, "{timestamp}.{body}", hex). Vapi
// does not retry a tool call; a timeout, a hang-up or the caller talking
// over the agent ends the request, and the model may then call the tool
// again under a new tool-call ID.
type FakeVapi struct {
	// URL is the tool's server URL: the agent listener's
	// RoutePlatforms + "/vapi".
	URL string
	// Token is the Bearer Token credential; "" sends none.
	Token string
	// Secret is the HMAC credential's secret; "" signs nothing.
	Secret string
	// Timeout ends a request the server has not answered (zero:
	// VapiDefaultTimeout).
	Timeout time.Duration
	Client  *http.Client
	// Now stamps the signature (zero: time.Now).
	Now func() time.Time
}

// VapiCall is one phone call on Vapi: its ID and the caller's number.
type VapiCall struct {
	ID       string
	Customer string
}

// VapiAnswer is what the server answered one delivery.
type VapiAnswer struct {
	Status int
	Body   []byte
	// Results are the answer's results by tool-call ID.
	Results map[string]VapiResult
}

// VapiResult is one tool call's result, as the model receives it.
type VapiResult struct {
	Result string `json:"result"`
	Error  string `json:"error"`
}

// NewCall is a new phone call from customer.
func (f *FakeVapi) NewCall(customer string) VapiCall {
	return VapiCall{ID: uuid(), Customer: customer}
}

// Send delivers one tool-calls message with calls. It fails when ctx
// ends or the server does not answer within the timeout, as Vapi drops
// the request then.
func (f *FakeVapi) Send(ctx context.Context, call VapiCall, calls ...ToolCall) (VapiAnswer, error) {
	body, err := f.message(call, calls)
	if err != nil {
		return VapiAnswer{}, err
	}
	return f.Deliver(ctx, body)
}

// Deliver posts one server message (any type) as Vapi does: with the
// credentials, within the timeout.
func (f *FakeVapi) Deliver(ctx context.Context, body []byte) (VapiAnswer, error) {
	h := http.Header{"Content-Type": {"application/json"}}
	if f.Token != "" {
		h.Set("Authorization", "Bearer "+f.Token)
	}
	if f.Secret != "" {
		ts := strconv.FormatInt(f.now().UnixMilli(), 10)
		m := hmac.New(sha256.New, []byte(f.Secret))
		m.Write([]byte(ts + "."))
		m.Write(body)
		h.Set(VapiTimestampHeader, ts)
		h.Set(VapiSignatureHeader, hex.EncodeToString(m.Sum(nil)))
	}
	status, raw, err := post(ctx, f.Client, f.URL, h, body, cmp.Or(f.Timeout, VapiDefaultTimeout))
	if err != nil {
		return VapiAnswer{}, err
	}
	a := VapiAnswer{Status: status, Body: raw, Results: map[string]VapiResult{}}
	if status != http.StatusOK {
		return a, nil
	}
	var out struct {
		Results []struct {
			ToolCallID string `json:"toolCallId"`
			VapiResult
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return a, fmt.Errorf("vapi: the answer is not {\"results\": […]}: %w", err)
	}
	for _, r := range out.Results {
		a.Results[r.ToolCallID] = r.VapiResult
	}
	return a, nil
}

func (f *FakeVapi) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// message is the server message as Vapi sends it: the calls both in
// toolCallList and, with their tool, in toolWithToolCallList.
func (f *FakeVapi) message(call VapiCall, calls []ToolCall) ([]byte, error) {
	type function struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	type toolCall struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	list := make([]toolCall, 0, len(calls))
	with := make([]map[string]any, 0, len(calls))
	for _, c := range calls {
		tc := toolCall{ID: c.ID, Type: "function", Function: function{Name: string(c.Name), Arguments: c.Args}}
		list = append(list, tc)
		with = append(with, map[string]any{"type": "function", "function": map[string]any{"name": string(c.Name)},
			"server": map[string]any{"url": f.URL, "timeoutSeconds": int(f.Timeout / time.Second)}, "toolCall": tc})
	}
	customer := map[string]any{"number": call.Customer}
	return json.Marshal(map[string]any{"message": map[string]any{
		"type": "tool-calls", "timestamp": f.now().UnixMilli(),
		"call":     map[string]any{"id": call.ID, "orgId": "org-fake", "type": "inboundPhoneCall", "status": "in-progress", "customer": customer},
		"customer": customer, "phoneNumber": map[string]any{"number": "+4930123456"},
		"toolCallList": list, "toolWithToolCallList": with,
	}})
}

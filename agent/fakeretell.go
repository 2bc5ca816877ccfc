package agent

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Retell's custom function defaults: it waits up to two minutes for the
// answer and retries a call that failed or timed out up to twice.
const (
	RetellDefaultTimeout = 2 * time.Minute
	RetellRetries        = 2
)

// FakeRetell calls custom functions the way Retell AI does: one POST per
// function call with {"name", "call", "args"}, signed in
// X-Retell-Signature with the account's webhook API key (a fresh
// timestamp per attempt), retried when an attempt fails or times out.
// Retell sends no tool-call ID: a retry is the same body again.
type FakeRetell struct {
	// URL is the function's endpoint: RoutePlatforms + "/retell".
	URL string
	// Token goes in the Authorization header the shop configured on the
	// function (the tenant's API token); "" sends none.
	Token string
	// APIKey signs; "" signs nothing.
	APIKey string
	// Timeout ends an attempt not answered (zero: RetellDefaultTimeout).
	Timeout time.Duration
	// Retries after a failed attempt (zero: RetellRetries; negative: none).
	Retries int
	// Client sends the attempts (nil: http.DefaultClient).
	Client *http.Client
	Now    func() time.Time
}

// RetellCall is one phone call on Retell.
type RetellCall struct {
	ID, From, To, Direction string
}

// RetellAnswer is the last attempt's answer and how many were made.
type RetellAnswer struct {
	Status   int
	Body     []byte
	Attempts int
}

// NewCall is a new inbound phone call from customer.
func (f *FakeRetell) NewCall(customer string) RetellCall {
	return RetellCall{ID: "call_" + randomHex(16), From: customer, To: "+4930123456", Direction: "inbound"}
}

// Call calls one custom function and retries as Retell does; it fails
// when every attempt failed.
func (f *FakeRetell) Call(ctx context.Context, call RetellCall, name ToolName, args map[string]any) (RetellAnswer, error) {
	body, err := json.Marshal(map[string]any{"name": string(name), "args": args, "call": map[string]any{
		"call_id": call.ID, "call_type": "phone_call", "agent_id": "agent_fake", "call_status": "ongoing",
		"from_number": call.From, "to_number": call.To, "direction": call.Direction,
	}})
	if err != nil {
		return RetellAnswer{}, err
	}
	retries := cmp.Or(f.Retries, RetellRetries)
	var a RetellAnswer
	for a.Attempts = 1; ; a.Attempts++ {
		a.Status, a.Body, err = post(ctx, f.Client, f.URL, f.header(body), body, cmp.Or(f.Timeout, RetellDefaultTimeout))
		if (err == nil && a.Status < 300) || a.Attempts > retries || ctx.Err() != nil {
			return a, err
		}
	}
}

func (f *FakeRetell) header(body []byte) http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	if f.Token != "" {
		h.Set("Authorization", "Bearer "+f.Token)
	}
	if f.APIKey != "" {
		now := time.Now
		if f.Now != nil {
			now = f.Now
		}
		ts := strconv.FormatInt(now().UnixMilli(), 10)
		m := hmac.New(sha256.New, []byte(f.APIKey))
		m.Write(body)
		m.Write([]byte(ts))
		h.Set(RetellSignatureHeader, "v="+ts+",d="+hex.EncodeToString(m.Sum(nil)))
	}
	return h
}

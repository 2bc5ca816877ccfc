package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// ElevenLabsDefaultTimeout is how long ElevenLabs waits for a server
// tool's answer (response_timeout_secs' default).
const ElevenLabsDefaultTimeout = 20 * time.Second

// FakeElevenLabs calls server tools the way ElevenLabs Agents does: a
// POST of the arguments to the tool's URL, with the headers the tool is
// configured with (the Authorization secret, the conversation and caller
// from the system dynamic variables). It does not retry; when the call
// times out or the caller talks over the agent the request is dropped, and
// the model may call the tool again.
type FakeElevenLabs struct {
	// URL is RoutePlatforms + "/elevenlabs"; a tool's URL is URL/<tool>.
	URL string
	// Token is the Authorization secret (the tenant's API token).
	Token string
	// Timeout ends a call not answered (zero: ElevenLabsDefaultTimeout).
	Timeout time.Duration
	Client  *http.Client
}

// ElevenLabsConversation is one conversation (a phone call).
type ElevenLabsConversation struct {
	ID, Caller string
}

// NewConversation is a new phone conversation with customer.
func (f *FakeElevenLabs) NewConversation(customer string) ElevenLabsConversation {
	return ElevenLabsConversation{ID: "conv_" + randomHex(13), Caller: customer}
}

// Call calls one server tool and returns the status and body.
func (f *FakeElevenLabs) Call(ctx context.Context, conv ElevenLabsConversation, name ToolName, args map[string]any) (int, []byte, error) {
	if args == nil {
		args = map[string]any{}
	}
	body, err := json.Marshal(args)
	if err != nil {
		return 0, nil, err
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if f.Token != "" {
		h.Set("Authorization", "Bearer "+f.Token)
	}
	h.Set(ElevenLabsConversationHeader, conv.ID)
	h.Set(ElevenLabsCallerHeader, conv.Caller)
	return post(ctx, f.Client, f.URL+"/"+string(name), h, body, cmp.Or(f.Timeout, ElevenLabsDefaultTimeout))
}

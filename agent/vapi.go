package agent

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bookonce/bookonce/internal/web"
)

// Vapi's HMAC credential, with Vapi's defaults: the signature in
// x-signature, the Unix time in x-timestamp, hex HMAC-SHA256 of
// "{timestamp}.{body}" (of the body alone without a timestamp header).
const (
	VapiSignatureHeader = "X-Signature"
	VapiTimestampHeader = "X-Timestamp"
)

// signatureSkew is how far a signed timestamp may be from now: a captured
// delivery cannot be replayed later (and a replay within it is a
// redelivery, answered from the stored answer).
const signatureSkew = 5 * time.Minute

// vapi is Vapi's "tool-calls" server message and its answer.
type vapi struct{}

// vapiMessage is the part of Vapi's server message the tools need.
type vapiMessage struct {
	Message struct {
		Type string `json:"type"`
		Call struct {
			ID       string       `json:"id"`
			Customer vapiCustomer `json:"customer"`
		} `json:"call"`
		Customer     vapiCustomer `json:"customer"`
		ToolCallList []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		} `json:"toolCallList"`
	} `json:"message"`
}

type vapiCustomer struct {
	Number string `json:"number"`
}

func (vapi) verify(h http.Header, body []byte, secret string, now time.Time) error {
	sig := strings.TrimPrefix(h.Get(VapiSignatureHeader), "sha256=")
	if sig == "" {
		return errors.New("the delivery is not signed: give the tool's server an HMAC credential (SHA256, Vapi's default headers and payload format) with the secret in VOICE_PLATFORM_SECRETS")
	}
	payload := body
	if ts := h.Get(VapiTimestampHeader); ts != "" {
		at, err := unixTime(ts)
		if err != nil {
			return err
		}
		if d := now.Sub(at); d > signatureSkew || d < -signatureSkew {
			return fmt.Errorf("the signature's timestamp is %s from now (at most %s)", d.Round(time.Second), signatureSkew)
		}
		payload = append([]byte(ts+"."), body...)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(payload)
	got, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(got, m.Sum(nil)) {
		return errors.New("the signature does not match this tenant's secret")
	}
	return nil
}

// unixTime reads a timestamp in Unix seconds or milliseconds.
func unixTime(ts string) (time.Time, error) {
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q is not Unix time", ts)
	}
	if n > 1e12 {
		return time.UnixMilli(n), nil
	}
	return time.Unix(n, 0), nil
}

func (vapi) signed() bool { return false } // its Bearer Token credential may stand alone

func (vapi) parse(_ *http.Request, body []byte) (platformRequest, error) {
	var m vapiMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return platformRequest{}, errors.New("not a Vapi server message: " + err.Error())
	}
	msg := m.Message
	if msg.Type != "tool-calls" {
		return platformRequest{}, errIgnored
	}
	if msg.Call.ID == "" || len(msg.ToolCallList) == 0 {
		return platformRequest{}, errors.New("a tool-calls message needs message.call.id and at least one message.toolCallList entry")
	}
	req := platformRequest{CallID: msg.Call.ID, Caller: msg.Call.Customer.Number}
	if req.Caller == "" {
		req.Caller = msg.Customer.Number
	}
	for _, c := range msg.ToolCallList {
		if c.ID == "" {
			return platformRequest{}, errors.New("a toolCallList entry has no id")
		}
		req.Calls = append(req.Calls, platformCall{ID: c.ID, Name: c.Function.Name, Args: openAIArgs(c.Function.Arguments)})
	}
	return req, nil
}

// openAIArgs takes arguments as an object or, as OpenAI's function
// calling sends them, as a string holding the object.
func openAIArgs(raw json.RawMessage) json.RawMessage {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return json.RawMessage(s)
	}
	return raw
}

// vapiResult is one entry of Vapi's answer: the result as a string (Vapi
// hands it to the model as it is) or the error.
type vapiResult struct {
	ToolCallID string `json:"toolCallId"`
	Result     string `json:"result,omitempty"`
	Error      string `json:"error,omitempty"`
}

func (vapi) write(w http.ResponseWriter, results []platformResult) {
	out := struct {
		Results []vapiResult `json:"results"`
	}{Results: make([]vapiResult, 0, len(results))}
	for _, r := range results {
		out.Results = append(out.Results, vapiResult{ToolCallID: r.ID, Result: string(r.Output), Error: r.Error})
	}
	web.WriteJSON(w, http.StatusOK, out)
}

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

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
)

// RetellSignatureHeader carries Retell's signature of a delivery:
// "v=<Unix ms>,d=<hex HMAC-SHA256 of the body followed by the timestamp>",
// keyed with the account's webhook API key.
const RetellSignatureHeader = "X-Retell-Signature"

// retell is a Retell AI custom function call: one function per POST,
// {"name", "call", "args"}; the answer's body is what the model reads.
type retell struct{}

// retellRequest is the part of Retell's custom function call the tools
// need.
type retellRequest struct {
	Name string `json:"name"`
	Call struct {
		CallID     string `json:"call_id"`
		FromNumber string `json:"from_number"`
		ToNumber   string `json:"to_number"`
		Direction  string `json:"direction"`
	} `json:"call"`
	Args json.RawMessage `json:"args"`
}

// Retell always signs, with the account's API key: there is no unsigned
// way to configure it.
func (retell) signed() bool { return true }

func (retell) verify(h http.Header, body []byte, key string, now time.Time) error {
	ts, digest, err := retellSignature(h.Get(RetellSignatureHeader))
	if err != nil {
		return err
	}
	at, err := unixTime(ts)
	if err != nil {
		return err
	}
	if d := now.Sub(at); d > signatureSkew || d < -signatureSkew {
		return fmt.Errorf("the signature's timestamp is %s from now (at most %s)", d.Round(time.Second), signatureSkew)
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	m.Write([]byte(ts))
	got, err := hex.DecodeString(digest)
	if err != nil || !hmac.Equal(got, m.Sum(nil)) {
		return errors.New("the signature does not match this tenant's Retell API key")
	}
	return nil
}

// retellSignature splits "v=<ts>,d=<hex>".
func retellSignature(header string) (ts, digest string, err error) {
	if header == "" {
		return "", "", errors.New("the delivery is not signed (no " + RetellSignatureHeader + ")")
	}
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "v":
			ts = v
		case "d":
			digest = v
		}
	}
	if ts == "" || digest == "" {
		return "", "", errors.New("the signature is not v=<timestamp>,d=<digest>")
	}
	return ts, digest, nil
}

func (retell) parse(_ *http.Request, body []byte) (platformRequest, error) {
	var in retellRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return platformRequest{}, errors.New("not a Retell custom function call: " + err.Error())
	}
	if in.Name == "" || in.Call.CallID == "" {
		return platformRequest{}, errors.New(`a Retell custom function call needs "name" and "call.call_id" (switch "Payload: args only" off)`)
	}
	req := platformRequest{CallID: in.Call.CallID, Caller: in.Call.FromNumber}
	if in.Call.Direction == "outbound" {
		req.Caller = in.Call.ToNumber
	}
	id, err := argsCallID(in.Name, in.Args)
	if err != nil {
		return platformRequest{}, err
	}
	req.Calls = []platformCall{{ID: id, Name: in.Name, Args: openAIArgs(in.Args)}}
	return req, nil
}

// argsCallID names a function call for a platform that sends no
// tool-call ID (Retell, ElevenLabs) and repeats a call as it was when it
// retries. So within one phone call the same function with the same
// arguments is one operation, which for the booking tools is what their
// intent decides anyway.
func argsCallID(name string, args json.RawMessage) (string, error) {
	canon := []byte("{}")
	if len(args) > 0 && string(args) != "null" {
		var err error
		if canon, err = idempotency.CanonicalJSON(openAIArgs(args)); err != nil {
			return "", errors.New(`"args" must be a JSON object: ` + err.Error())
		}
	}
	sum := sha256.Sum256(append([]byte(name+"\x00"), canon...))
	return "fn-" + hex.EncodeToString(sum[:16]), nil
}

// write answers with the tool's JSON as the body, which Retell hands the
// model.
func (retell) write(w http.ResponseWriter, results []platformResult) { writeBody(w, results[0]) }

// writeBody answers one call with the tool's JSON as the body. A tool
// error is a 200 too: a non-2xx makes the platform retry (Retell) or
// report a failure the model cannot act on, while the error message says
// what to do.
func writeBody(w http.ResponseWriter, r platformResult) {
	if r.Error != "" {
		web.WriteJSON(w, http.StatusOK, map[string]string{"error": r.Error})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(r.Output)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(r.Output)
}

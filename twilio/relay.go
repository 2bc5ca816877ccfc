package twilio

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// RelayCall is a call on ConversationRelay as Twilio runs it: it opens the
// WebSocket the <ConversationRelay url> names, with the X-Twilio-Signature
// of that URL in the handshake; sends setup, then each sentence the caller
// says as a prompt; and reads the text tokens the server sends back. When
// the socket drops, Reconnect opens a new one for the same call and
// replays the prompts that had no answer yet.
type RelayCall struct {
	// Dial is the address to connect to (ws://127.0.0.1:…/…) and Signed
	// the URL the TwiML named, which Twilio signs.
	Dial, Signed string
	AuthToken    string
	CallSid      string
	From, To     string
	SessionID    string

	conn *websocket.Conn
	// unanswered are the prompts sent since the last text received.
	unanswered []string
}

// RelayText is a text message from the server.
type RelayText struct {
	Type  string `json:"type"`
	Token string `json:"token"`
	Last  bool   `json:"last"`
}

// NewRelayCall is a call from customer to the simulated shop, to connect
// at dial with the signature of signed.
func NewRelayCall(dial, signed, authToken, customer string) *RelayCall {
	return &RelayCall{Dial: dial, Signed: signed, AuthToken: authToken, CallSid: NewSID("CA"), From: customer, To: SimulatedShop, SessionID: NewSID("VX")}
}

// Connect opens the socket and sends setup; on a reconnect it replays the
// prompts that had no answer.
func (c *RelayCall) Connect(ctx context.Context) error {
	h := http.Header{"X-Twilio-Signature": {Sign(c.AuthToken, c.Signed, nil)}}
	conn, resp, err := websocket.Dial(ctx, c.Dial, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		if resp != nil {
			return errors.New("relay handshake: " + resp.Status)
		}
		return err
	}
	c.conn = conn
	err = wsjson.Write(ctx, conn, map[string]any{"type": "setup", "sessionId": c.SessionID, "accountSid": "ACsimulated",
		"callSid": c.CallSid, "from": c.From, "to": c.To, "direction": "inbound", "callType": "PSTN", "callStatus": "IN-PROGRESS",
		"customParameters": map[string]string{}})
	if err != nil {
		return err
	}
	replay := c.unanswered
	c.unanswered = nil
	for _, text := range replay {
		if err := c.Say(ctx, text); err != nil {
			return err
		}
	}
	return nil
}

// Say sends a sentence the caller said, as one complete prompt.
func (c *RelayCall) Say(ctx context.Context, text string) error {
	c.unanswered = append(c.unanswered, text)
	return wsjson.Write(ctx, c.conn, map[string]any{"type": "prompt", "voicePrompt": text, "lang": "de-DE", "last": true})
}

// Interrupt tells the server the caller spoke over it.
func (c *RelayCall) Interrupt(ctx context.Context) error {
	return wsjson.Write(ctx, c.conn, map[string]any{"type": "interrupt", "utteranceUntilInterrupt": "", "durationUntilInterruptMs": 300})
}

// Next reads the next complete answer (text up to a token marked last).
func (c *RelayCall) Next(ctx context.Context) (string, error) {
	var said string
	for {
		var m RelayText
		if err := wsjson.Read(ctx, c.conn, &m); err != nil {
			return said, err
		}
		c.unanswered = nil
		said += m.Token
		if m.Type != "text" || m.Last {
			return said, nil
		}
	}
}

// Drop loses the socket without a close handshake, as a network failure
// does.
func (c *RelayCall) Drop() { _ = c.conn.CloseNow() }

// Hangup ends the session as the caller hanging up does.
func (c *RelayCall) Hangup() { _ = c.conn.Close(websocket.StatusNormalClosure, "") }

// RelayAnswer is the <Connect><ConversationRelay> of the TwiML a number's
// voice URL answers a call with.
type RelayAnswer struct {
	URL           string `xml:"url,attr"`
	Language      string `xml:"language,attr"`
	Greeting      string `xml:"welcomeGreeting,attr"`
	Interruptible string `xml:"interruptible,attr"`
}

// CallRelay places a call from customer to the simulated shop as Twilio
// does with a number on ConversationRelay: it asks route for the call's
// TwiML and returns its ConversationRelay, and the call Twilio then runs
// on the socket the TwiML names (see Relay).
func (s Simulator) CallRelay(ctx context.Context, route, customer string) (*RelayCall, RelayAnswer, error) {
	status, body, err := s.Post(ctx, route, url.Values{"CallSid": {NewSID("CA")}, "From": {customer}, "To": {SimulatedShop}})
	if err != nil {
		return nil, RelayAnswer{}, err
	}
	if status != http.StatusOK {
		return nil, RelayAnswer{}, fmt.Errorf("relay call: %s answered %d: %s", route, status, body)
	}
	a, err := ParseRelayAnswer(body)
	if err != nil {
		return nil, a, err
	}
	c, err := s.Relay(a, customer)
	return c, a, err
}

// ParseRelayAnswer reads the <Connect><ConversationRelay> of the TwiML a
// number's voice URL answered a call with.
func ParseRelayAnswer(twiml string) (RelayAnswer, error) {
	var tw struct {
		Relay RelayAnswer `xml:"Connect>ConversationRelay"`
	}
	if err := xml.Unmarshal([]byte(twiml), &tw); err != nil || tw.Relay.URL == "" {
		return RelayAnswer{}, fmt.Errorf("relay call: no <ConversationRelay url> in %q (%v)", twiml, err)
	}
	return tw.Relay, nil
}

// Relay is the call from customer that Twilio runs on the socket a names:
// dialled at GatewayURL, signed against the URL as named (the public one).
func (s Simulator) Relay(a RelayAnswer, customer string) (*RelayCall, error) {
	signed, err := url.Parse(a.URL)
	if err != nil {
		return nil, fmt.Errorf("relay call: %w", err)
	}
	dial := "ws" + strings.TrimPrefix(strings.TrimRight(s.GatewayURL, "/"), "http") + signed.RequestURI()
	return NewRelayCall(dial, a.URL, s.AuthToken, customer), nil
}

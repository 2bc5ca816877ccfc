package channels

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// relayPoll is how often a turn looks for its sentence's outcome: the
// caller hears the answer within this of it being known.
const relayPoll = 200 * time.Millisecond

// relayRecordPatience bounds the retries of a turn's inbox row: the
// sentence has no redelivery (Twilio sends it once), so a short database
// hiccup is waited out rather than losing it.
const relayRecordPatience = 5 * time.Second

// relayMessage is a message ConversationRelay sends: setup, prompt,
// interrupt, dtmf or error.
type relayMessage struct {
	Type        string `json:"type"`
	CallSid     string `json:"callSid"`
	From        string `json:"from"`
	To          string `json:"to"`
	VoicePrompt string `json:"voicePrompt"`
	Last        bool   `json:"last"`
	Digit       string `json:"digit"`
	Description string `json:"description"`
}

// relayText is a text token for ConversationRelay to speak; End ends the
// session (and with it the call).
type relayText struct {
	Type  string `json:"type"`
	Token string `json:"token,omitempty"`
	Last  bool   `json:"last"`
}

// relaySession is one WebSocket session of one call.
type relaySession struct {
	g      *Gateway
	conn   *websocket.Conn
	tenant *tenants.Profile
	sid    string
	caller string
	// partial collects a sentence sent in parts (last: false).
	partial strings.Builder
	// turnMu guards the turn in progress, writeMu the socket's writes.
	turnMu  sync.Mutex
	stop    context.CancelFunc
	writeMu sync.Mutex
}

// voiceRelaySocket runs one ConversationRelay session: setup names the
// call, each complete sentence is a turn (recorded in the inbox, handed to
// the conversation, its outcome spoken), and an interrupt or the next
// sentence ends the wait of the turn before (the booking goes on; its
// confirmation comes in writing).
func (g *Gateway) voiceRelaySocket(w http.ResponseWriter, r *http.Request) {
	// The listener's read and write timeouts are for requests, not for a
	// call that lasts minutes.
	// A writer that cannot clear them leaves the call to end at the
	// listener's timeout; the turn under way still finishes server-side.
	rc := http.NewResponseController(w)
	if err := errors.Join(rc.SetReadDeadline(time.Time{}), rc.SetWriteDeadline(time.Time{})); err != nil {
		g.log().Warn("relay session keeps the listener's timeouts", "err", err)
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		g.log().Warn("relay handshake failed", "err", err)
		return
	}
	s := &relaySession{g: g, conn: conn}
	ctx := r.Context()
	defer s.cancelTurn()
	for {
		var m relayMessage
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			if status := websocket.CloseStatus(err); status != websocket.StatusNormalClosure && status != websocket.StatusGoingAway && ctx.Err() == nil {
				g.log().Info("relay session ended", "call", s.sid, "err", err)
			}
			return
		}
		if !s.handle(ctx, m) {
			_ = conn.Close(websocket.StatusNormalClosure, "") // the session ends either way; Twilio hangs up
			return
		}
	}
}

// handle acts on one message; false ends the session.
func (s *relaySession) handle(ctx context.Context, m relayMessage) bool {
	switch m.Type {
	case "setup":
		return s.setup(ctx, m)
	case "prompt":
		if s.tenant == nil {
			return false // a prompt before setup: not Twilio's order
		}
		s.partial.WriteString(m.VoicePrompt)
		if !m.Last {
			return true
		}
		text := strings.TrimSpace(s.partial.String())
		s.partial.Reset()
		if text != "" {
			s.startTurn(ctx, text)
		}
	case "interrupt":
		s.cancelTurn() // the caller speaks: stop waiting, the booking goes on
	case "error":
		s.g.log().Warn("relay reports an error", "call", s.sid, "description", mask.Phones(m.Description))
	}
	return true
}

// setup binds the session to the call's tenant and caller; a call to a
// number no tenant owns, or from a number that cannot be texted, is told
// so and ended, as the <Gather> route does.
func (s *relaySession) setup(ctx context.Context, m relayMessage) bool {
	p, ok := s.g.Tenants.ByNumber(m.To)
	who := identify(m.From, s.g.Region)
	switch {
	case !ok:
		s.say(ctx, "This number is not configured for bookings yet. Diese Nummer ist noch nicht für Buchungen eingerichtet.")
		return false
	case m.CallSid == "":
		s.say(ctx, say(p, tenants.TemplateVoiceUnassigned))
		return false
	case who.Number == "":
		s.say(ctx, say(p, tenants.TemplateVoiceUnknownNumber))
		return false
	}
	s.tenant, s.sid, s.caller = p, m.CallSid, who.Number
	return true
}

// startTurn ends the wait of the turn before and handles text as the
// call's next sentence while the session goes on reading (an interrupt
// must reach it).
func (s *relaySession) startTurn(ctx context.Context, text string) {
	s.cancelTurn()
	turnCtx, stop := context.WithCancel(ctx)
	s.turnMu.Lock()
	s.stop = stop
	s.turnMu.Unlock()
	go s.turn(turnCtx, text)
}

func (s *relaySession) cancelTurn() {
	s.turnMu.Lock()
	defer s.turnMu.Unlock()
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
}

// turn records the sentence (once per turn, whatever the socket replays),
// hands it to the conversation, says "one moment" and then the outcome
// as soon as it is known, or that the confirmation follows in writing.
func (s *relaySession) turn(ctx context.Context, text string) {
	g, p := s.g, s.tenant
	id, fresh, err := s.record(ctx, text)
	if err != nil {
		g.log().Error("relay turn not recorded", "call", s.sid, "err", err)
		s.say(ctx, say(p, tenants.TemplateVoiceUnassigned))
		return
	}
	s.say(ctx, say(p, tenants.TemplateVoiceOneMoment))
	if !fresh {
		g.Metrics.duplicates.WithLabelValues("inbox", p.ID, RouteVoiceRelaySocket).Inc()
	}
	deadline := time.Now().Add(cmp.Or(g.VoiceConfirmWait, DefaultVoiceConfirmWait))
	tick := time.NewTicker(relayPoll)
	defer tick.Stop()
	for {
		look, cancel := context.WithTimeout(ctx, statusLookupTimeout)
		outcome, said, err := g.callOutcome(look, p, s.caller, id)
		cancel()
		if err != nil && ctx.Err() == nil {
			g.log().Warn("relay outcome not read", "customer", mask.Phones(s.caller), "err", err)
		}
		switch {
		case ctx.Err() != nil:
			return // interrupted or hung up: the outcome comes in writing
		case outcome != "":
			g.Metrics.voice.WithLabelValues(outcome).Inc()
			s.say(ctx, said)
			return
		case time.Now().After(deadline):
			g.Metrics.voice.WithLabelValues(VoiceOutcomeFollows).Inc()
			s.say(ctx, say(p, tenants.TemplateVoiceConfirmFollows))
			return
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// record numbers the sentence as the call's turn, records it in the inbox
// under CallSid:relay:<turn> and, when new, hands it to the conversation.
// The same sentence as the call's last one is that turn again: a session
// Twilio reconnected replays what it had not been answered.
func (s *relaySession) record(ctx context.Context, text string) (string, bool, error) {
	g := s.g
	clean, _ := sanitise(text)
	digest := sha256.Sum256([]byte(s.sid + "\x00" + clean))
	var id string
	var fresh bool
	rec := func(ctx context.Context) error {
		var turn int
		err := g.Pool.QueryRow(ctx, `INSERT INTO voice_relay_turns (call_sid, turn, prompt) VALUES ($1, 1, $2)
			ON CONFLICT (call_sid) DO UPDATE SET turn = voice_relay_turns.turn + (voice_relay_turns.prompt <> EXCLUDED.prompt)::int,
				prompt = EXCLUDED.prompt, updated_at = now()
			RETURNING turn`, s.sid, digest[:]).Scan(&turn)
		if err != nil {
			return fmt.Errorf("relay turn: %w", err)
		}
		id = eventKey(fmt.Sprintf("%s:relay:%d", s.sid, turn))
		ev := inboxEvent{Tenant: s.tenant.ID, Customer: s.caller, Event: conversation.InboundEvent{
			EventID: id, Channel: workflows.ChannelVoice, Text: clean, ReceivedAt: g.now().UTC()}}
		if fresh, err = g.recordAs(ctx, id, RouteVoiceRelaySocket, ev, "pending"); err != nil || !fresh {
			return err
		}
		g.Metrics.accepted.WithLabelValues(RouteVoiceRelaySocket).Inc()
		telemetry.ObservePhase(g.Metrics.phases, ev.Tenant, telemetry.PhaseAccepted, ev.Event.ReceivedAt, g.now())
		if err := g.deliver(context.WithoutCancel(ctx), ev); err != nil {
			// The row stays pending: the inbox relay hands it on.
			g.log().Warn("relay turn recorded, not yet handed on", "event", id, "err", err)
		}
		return nil
	}
	err := retryFor(context.WithoutCancel(ctx), relayRecordPatience, rec)
	return id, fresh, err
}

// say sends text as one spoken answer; a session that is gone is no error
// (its turn's outcome comes in writing).
func (s *relaySession) say(ctx context.Context, text string) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if ctx.Err() != nil {
		return // an ended turn says nothing more
	}
	// The write does not take ctx's cancellation: the socket library
	// closes the whole connection when a write's context ends mid-write,
	// and a turn's ends whenever the caller interrupts or speaks again,
	// which must not drop the call.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), relayWriteTimeout)
	defer cancel()
	if err := wsjson.Write(wctx, s.conn, relayText{Type: "text", Token: text, Last: true}); err != nil {
		s.g.log().Info("relay answer not sent", "call", s.sid, "err", err)
	}
}

// relayWriteTimeout bounds one spoken answer's write to the socket.
const relayWriteTimeout = 10 * time.Second

// retryFor runs f until it succeeds or patience is over, pausing between
// attempts; the last error stands.
func retryFor(ctx context.Context, patience time.Duration, f func(context.Context) error) error {
	deadline := time.Now().Add(patience)
	pause := 100 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil || time.Now().Add(pause).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

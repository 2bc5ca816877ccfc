package channels

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
)

const emptyTwiML = `<?xml version="1.0" encoding="UTF-8"?><Response></Response>`

func writeTwiML(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	_, _ = w.Write([]byte(body))
}

// delivery is one signed webhook as a handler read it.
type delivery struct {
	route string
	// id is the delivery's own key (MessageSid, CallSid:step); "" when the
	// form has none.
	id      string
	from    string
	text    string
	channel workflows.Channel
	// tenant owns the number the delivery went to; nil: none does.
	tenant *tenants.Profile
	// answerFirst: the answer is sent before the event is handed to the
	// conversation (a caller hears silence until it arrives); the inbox
	// row, written before either, keeps the event if the hand-off fails.
	// A redelivery is answered as the first delivery was.
	answerFirst bool
}

// event builds the inbox event of d, and why it can be handed to no
// conversation ("" when it can). Nothing here refuses a delivery: what
// PostgreSQL cannot store is replaced, a number the phone library does
// not know is kept as Twilio sent it, and a caller without a number is
// recorded as unroutable.
func (g *Gateway) event(r *http.Request, d delivery) (inboxEvent, string) {
	key, reason := eventKey(d.id), ""
	if d.id == "" {
		key, reason = formKey(d.route, r.PostForm), ReasonMissingID
	}
	tenant := unconfiguredTenant
	if d.tenant != nil {
		tenant = d.tenant.ID
	} else {
		reason = ReasonUnconfiguredNumber // answered that the number is not configured, whoever wrote
	}
	text, dirty := sanitise(d.text)
	if dirty {
		g.Metrics.repaired.WithLabelValues(string(d.channel), RepairSanitised).Inc()
	}
	who := identify(d.from, g.Region)
	if who.Raw {
		g.Metrics.repaired.WithLabelValues(string(d.channel), RepairRawNumber).Inc()
	}
	if reason == "" {
		reason = who.Reason
	}
	ev := inboxEvent{Tenant: tenant, Customer: who.Number, Unroutable: reason, Event: conversation.InboundEvent{
		EventID: key, Channel: d.channel, Text: text, ReceivedAt: g.requestStart(r).UTC(),
	}}
	if ev.Customer == "" {
		ev.Customer = unknownCustomer
	}
	if reason != "" {
		ev.RawFrom, _ = sanitise(d.from)
	}
	return ev, reason
}

// unknownCustomer is the inbox's customer of a delivery whose sender
// cannot be identified; it never names a conversation.
const unknownCustomer = "unknown"

// unconfiguredTenant is the inbox's tenant of a delivery to a number no
// tenant owns; no tenant ID can take this form.
const unconfiguredTenant = "-"

// unroutable counts and logs a recorded delivery that goes to no
// conversation.
func (g *Gateway) unroutable(ev inboxEvent) {
	g.Metrics.unroutable.WithLabelValues(string(ev.Event.Channel), ev.Unroutable).Inc()
	if ev.Unroutable == ReasonUnconfiguredNumber {
		g.Metrics.unconfigured.WithLabelValues(string(ev.Event.Channel)).Inc()
	}
	g.log().Info("webhook recorded without a conversation", "channel", ev.Event.Channel, "reason", ev.Unroutable,
		"from", mask.Phones(ev.RawFrom[:min(len(ev.RawFrom), 64)]), "event", ev.Event.EventID)
}

// accept records an inbound event in the inbox and hands it to the
// customer's conversation, answering answer(""). A redelivery is answered
// at once and nothing else happens. A delivery that cannot be handed on
// (no number, no ID, a number no tenant owns) is recorded as done and
// answered answer(reason): Twilio must never retry it, and nothing is
// booked for a sender we cannot reach or a shop we do not know.
func (g *Gateway) accept(w http.ResponseWriter, r *http.Request, d delivery, answer func(reason string) string) {
	ev, reason := g.event(r, d)
	state := "pending"
	if reason != "" {
		state = "delivered" // nothing to hand on: the relay must never send it
	}
	fresh, err := g.recordAs(r.Context(), ev.Event.EventID, d.route, ev, state)
	if err != nil {
		g.log().Error("inbox insert failed", "route", d.route, "err", err)
		http.Error(w, "try again", http.StatusServiceUnavailable) // Twilio retries
		return
	}
	if !fresh {
		g.Metrics.duplicates.WithLabelValues("inbox", ev.Tenant, d.route).Inc()
		if d.answerFirst {
			// A caller is still listening: the same answer again (the
			// wait only reads), not an empty one that would end the call.
			writeTwiML(w, answer(reason))
			return
		}
		writeTwiML(w, emptyTwiML)
		return
	}
	g.Metrics.accepted.WithLabelValues(d.route).Inc()
	telemetry.ObservePhase(g.Metrics.phases, ev.Tenant, telemetry.PhaseAccepted, ev.Event.ReceivedAt, g.now())
	if reason != "" {
		g.unroutable(ev)
		writeTwiML(w, answer(reason))
		return
	}
	if d.answerFirst {
		writeTwiMLNow(w, answer(""))
	}
	// Not bound to the request: a caller who hung up (Twilio closing the
	// connection) must not cancel the hand-off of what was said.
	if err := g.deliver(context.WithoutCancel(r.Context()), ev); err != nil {
		// Accepted all the same: the relay delivers it later.
		g.log().Warn("conversation not reached; the relay will retry", "customer", mask.Phones(ev.Customer), "err", err)
	}
	if !d.answerFirst {
		writeTwiML(w, answer(""))
	}
}

// writeTwiMLNow sends a complete answer at once (its length declared and
// flushed), so Twilio has it while the handler goes on working.
func writeTwiMLNow(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	writeTwiML(w, body)
	_ = http.NewResponseController(w).Flush() // no flusher: sent when the handler returns, as before
}

func (g *Gateway) whatsapp(w http.ResponseWriter, r *http.Request) {
	from := r.PostForm.Get("From")
	if wa := r.PostForm.Get("WaId"); wa != "" && identify(from, g.Region).Number == "" {
		from = wa // the WhatsApp ID is the sender's number without the plus
	}
	g.accept(w, r, delivery{route: RouteWhatsApp, id: r.PostForm.Get("MessageSid"), from: from, tenant: g.owner(r),
		text: r.PostForm.Get("Body"), channel: workflows.ChannelWhatsApp}, func(reason string) string {
		if reason == ReasonUnconfiguredNumber {
			return unconfiguredWhatsApp
		}
		return emptyTwiML
	})
}

// voice answers a call: it is recorded (as done: its start has nothing
// to hand on) and the caller is asked for the wish, or, without a number
// we could write to, asked to write on WhatsApp.
func (g *Gateway) voice(w http.ResponseWriter, r *http.Request) {
	d := delivery{route: RouteVoice, from: r.PostForm.Get("From"), tenant: g.owner(r), channel: workflows.ChannelVoice}
	if sid := r.PostForm.Get("CallSid"); sid != "" {
		d.id = sid + ":start"
	}
	ev, reason := g.event(r, d)
	fresh, err := g.recordAs(r.Context(), ev.Event.EventID, RouteVoice, ev, "delivered")
	if err != nil {
		g.log().Error("inbox insert failed", "route", RouteVoice, "err", err)
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if !fresh {
		g.Metrics.duplicates.WithLabelValues("inbox", ev.Tenant, RouteVoice).Inc()
		writeTwiML(w, emptyTwiML)
		return
	}
	if reason != "" {
		g.unroutable(ev)
		writeTwiML(w, sorryTwiML(d.tenant, reason))
		return
	}
	writeTwiML(w, gatherTwiML(d.tenant, 1, tenants.TemplateVoiceGreeting))
}

func (g *Gateway) voiceGather(w http.ResponseWriter, r *http.Request) {
	sid := r.PostForm.Get("CallSid")
	d := delivery{route: RouteVoiceGather, from: r.PostForm.Get("From"), tenant: g.owner(r), text: r.PostForm.Get("SpeechResult"),
		channel: workflows.ChannelVoice, answerFirst: true}
	step, err := strconv.Atoi(r.URL.Query().Get("step"))
	if sid != "" && err == nil && step >= 1 {
		d.id = fmt.Sprintf("%s:gather:%d", sid, step)
	}
	// Answered as soon as the sentence is in the inbox, before it is
	// handed on: the caller hears "one moment" and waits on the line
	// (RouteVoiceStatus) while the conversation works, instead of
	// silence while Temporal is called.
	g.accept(w, r, d, func(reason string) string {
		if reason == "" {
			return waitTwiML(d.tenant, step, 1)
		}
		return sorryTwiML(d.tenant, reason)
	})
}

// status records an outbound message's delivery status in the inbox and
// hands it to the outbox (outbox.Store.RecordStatus), whose state machine
// never moves a message backwards.
func (g *Gateway) status(w http.ResponseWriter, r *http.Request) {
	sid, _ := sanitise(r.PostForm.Get("MessageSid"))
	st, _ := sanitise(r.PostForm.Get("MessageStatus"))
	ev := inboxEvent{Tenant: g.statusTenant(r), Customer: "-", Event: conversation.InboundEvent{Channel: "status", Text: st}}
	if sid == "" || st == "" {
		ev.Event.EventID, ev.Unroutable = formKey(RouteStatus, r.PostForm), ReasonMissingID
	} else {
		ev.Event.EventID = eventKey(sid + ":" + st)
	}
	fresh, err := g.recordAs(r.Context(), ev.Event.EventID, RouteStatus, ev, "delivered")
	if err != nil {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if !fresh {
		g.Metrics.duplicates.WithLabelValues("inbox", ev.Tenant, RouteStatus).Inc()
		writeTwiML(w, emptyTwiML)
		return
	}
	if ev.Unroutable != "" {
		g.Metrics.accepted.WithLabelValues(RouteStatus).Inc()
		g.unroutable(ev)
		writeTwiML(w, emptyTwiML)
		return
	}
	outboxID, _ := sanitise(r.URL.Query().Get(outbox.CallbackParam))
	code, _ := sanitise(r.PostForm.Get("ErrorCode"))
	if err := g.Outbox.RecordStatus(r.Context(), outboxID, sid, st, outbox.Failure{Code: code, Reason: twilio.DescribeFailure(code)}); err != nil {
		g.log().Error("outbox status not recorded; Twilio retries", "err", err)
		g.forget(r.Context(), ev.Event.EventID)
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	g.Metrics.accepted.WithLabelValues(RouteStatus).Inc()
	writeTwiML(w, emptyTwiML)
}

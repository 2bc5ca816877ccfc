package channels

import (
	"fmt"
	"html"
	"net/http"
	"strconv"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/workflows"
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
	ev := inboxEvent{Tenant: g.Tenant, Customer: who.Number, Unroutable: reason, Event: workflows.InboundEvent{
		EventID: key, Channel: d.channel, Text: text, ReceivedAt: g.now().UTC(),
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

// unroutable counts and logs a recorded delivery that goes to no
// conversation.
func (g *Gateway) unroutable(ev inboxEvent) {
	g.Metrics.unroutable.WithLabelValues(string(ev.Event.Channel), ev.Unroutable).Inc()
	g.log().Info("webhook recorded without a conversation", "channel", ev.Event.Channel, "reason", ev.Unroutable,
		"from", mask.Phones(ev.RawFrom[:min(len(ev.RawFrom), 64)]), "event", ev.Event.EventID)
}

// accept records an inbound event in the inbox and hands it to the
// customer's conversation, answering answer. A redelivery is answered at
// once and nothing else happens. A delivery that cannot be handed on (no
// number, no ID) is recorded as done and answered sorry: Twilio must
// never retry it, and nothing is booked for a sender we cannot reach.
func (g *Gateway) accept(w http.ResponseWriter, r *http.Request, d delivery, answer, sorry string) {
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
		g.Metrics.duplicates.WithLabelValues("inbox", g.Tenant, d.route).Inc()
		writeTwiML(w, emptyTwiML)
		return
	}
	g.Metrics.accepted.WithLabelValues(d.route).Inc()
	if reason != "" {
		g.unroutable(ev)
		writeTwiML(w, sorry)
		return
	}
	if err := g.deliver(r.Context(), ev); err != nil {
		// Accepted all the same: the relay delivers it later.
		g.log().Warn("conversation not reached; the relay will retry", "customer", mask.Phones(ev.Customer), "err", err)
	}
	writeTwiML(w, answer)
}

func (g *Gateway) whatsapp(w http.ResponseWriter, r *http.Request) {
	from := r.PostForm.Get("From")
	if wa := r.PostForm.Get("WaId"); wa != "" && identify(from, g.Region).Number == "" {
		from = wa // the WhatsApp ID is the sender's number without the plus
	}
	g.accept(w, r, delivery{route: RouteWhatsApp, id: r.PostForm.Get("MessageSid"), from: from,
		text: r.PostForm.Get("Body"), channel: workflows.ChannelWhatsApp}, emptyTwiML, emptyTwiML)
}

// gatherTwiML asks for the wish by speech; each answer posts to the gather
// route with the next step number, which makes the inbox key of a spoken
// sentence CallSid + step.
func gatherTwiML(step int, prompt string) string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Response><Gather input="speech" language="de-DE" speechTimeout="auto" action="%s?step=%d" method="POST"><Say language="de-DE">%s</Say></Gather></Response>`,
		RouteVoiceGather, step, html.EscapeString(prompt))
}

// sorryTwiML ends a call that cannot lead to a booking (we could not
// text the caller a confirmation) and sends the caller to WhatsApp.
func sorryTwiML(reason string) string {
	say := "Leider können wir Ihre Rufnummer nicht erkennen und deshalb am Telefon keinen Termin für Sie buchen. " +
		"Bitte schreiben Sie uns eine WhatsApp-Nachricht an diese Nummer, dann buchen wir Ihren Termin dort. Auf Wiederhören."
	if reason == ReasonMissingID {
		say = "Leider konnten wir Ihren Anruf nicht zuordnen. " +
			"Bitte schreiben Sie uns eine WhatsApp-Nachricht an diese Nummer, dann buchen wir Ihren Termin dort. Auf Wiederhören."
	}
	return `<?xml version="1.0" encoding="UTF-8"?><Response><Say language="de-DE">` + html.EscapeString(say) + `</Say><Hangup/></Response>`
}

// voice answers a call: it is recorded (as done: its start has nothing
// to hand on) and the caller is asked for the wish, or, without a number
// we could write to, asked to write on WhatsApp.
func (g *Gateway) voice(w http.ResponseWriter, r *http.Request) {
	d := delivery{route: RouteVoice, from: r.PostForm.Get("From"), channel: workflows.ChannelVoice}
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
		g.Metrics.duplicates.WithLabelValues("inbox", g.Tenant, RouteVoice).Inc()
		writeTwiML(w, emptyTwiML)
		return
	}
	if reason != "" {
		g.unroutable(ev)
		writeTwiML(w, sorryTwiML(reason))
		return
	}
	writeTwiML(w, gatherTwiML(1, "Willkommen! Welchen Termin möchten Sie buchen?"))
}

func (g *Gateway) voiceGather(w http.ResponseWriter, r *http.Request) {
	sid := r.PostForm.Get("CallSid")
	d := delivery{route: RouteVoiceGather, from: r.PostForm.Get("From"), text: r.PostForm.Get("SpeechResult"), channel: workflows.ChannelVoice}
	step, err := strconv.Atoi(r.URL.Query().Get("step"))
	if sid != "" && err == nil && step >= 1 {
		d.id = fmt.Sprintf("%s:gather:%d", sid, step)
	}
	sorry := sorryTwiML(ReasonMissingID)
	if d.id != "" {
		sorry = sorryTwiML(ReasonWithheld)
	}
	next := gatherTwiML(step+1, "Danke, wir prüfen Ihren Wunsch und schicken Ihnen eine SMS. Möchten Sie noch etwas sagen?")
	g.accept(w, r, d, next, sorry)
}

// status records an outbound message's delivery status in the inbox and
// hands it to the outbox (outbox.Store.RecordStatus), whose state machine
// never moves a message backwards.
func (g *Gateway) status(w http.ResponseWriter, r *http.Request) {
	sid, _ := sanitise(r.PostForm.Get("MessageSid"))
	st, _ := sanitise(r.PostForm.Get("MessageStatus"))
	ev := inboxEvent{Tenant: g.Tenant, Customer: "-", Event: workflows.InboundEvent{Channel: "status", Text: st}}
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
		g.Metrics.duplicates.WithLabelValues("inbox", g.Tenant, RouteStatus).Inc()
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
	if err := g.Outbox.RecordStatus(r.Context(), outboxID, sid, st); err != nil {
		g.log().Error("outbox status not recorded; Twilio retries", "err", err)
		g.forget(r.Context(), ev.Event.EventID)
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	g.Metrics.accepted.WithLabelValues(RouteStatus).Inc()
	writeTwiML(w, emptyTwiML)
}

package channels

import (
	"fmt"
	"html"
	"net/http"
	"strconv"

	"github.com/bookonce/bookonce/channels/ops"
	"github.com/bookonce/bookonce/workflows"
)

const emptyTwiML = `<?xml version="1.0" encoding="UTF-8"?><Response></Response>`

func writeTwiML(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	_, _ = w.Write([]byte(body))
}

// accept records an inbound event in the inbox and hands it on. A
// redelivery is answered at once and nothing else happens.
func (g *Gateway) accept(w http.ResponseWriter, r *http.Request, route, eventID, from, text string, ch workflows.Channel, answer string) {
	customer, err := normalise(from, g.Region)
	if err != nil {
		g.Metrics.rejected.WithLabelValues(route, "bad_number").Inc()
		http.Error(w, "From is not a phone number", http.StatusBadRequest)
		return
	}
	ev := inboxEvent{Tenant: g.Tenant, Customer: customer, Event: workflows.InboundEvent{
		EventID: eventID, Channel: ch, Text: text, ReceivedAt: g.now().UTC(),
	}}
	fresh, err := g.record(r.Context(), eventID, route, ev)
	if err != nil {
		g.log().Error("inbox insert failed", "route", route, "err", err)
		http.Error(w, "try again", http.StatusServiceUnavailable) // Twilio retries
		return
	}
	if !fresh {
		g.Metrics.duplicates.WithLabelValues("inbox", g.Tenant, route).Inc()
		writeTwiML(w, emptyTwiML)
		return
	}
	g.Metrics.accepted.WithLabelValues(route).Inc()
	if err := g.deliver(r.Context(), ev); err != nil {
		// Accepted all the same: the relay delivers it later.
		g.log().Warn("conversation not reached; the relay will retry", "customer", ops.MaskPhones(customer), "err", err)
	}
	writeTwiML(w, answer)
}

func (g *Gateway) whatsapp(w http.ResponseWriter, r *http.Request) {
	sid := r.PostForm.Get("MessageSid")
	from := r.PostForm.Get("From")
	if wa := r.PostForm.Get("WaId"); from == "" && wa != "" {
		from = wa
	}
	if sid == "" || from == "" {
		http.Error(w, "MessageSid and From are required", http.StatusBadRequest)
		return
	}
	g.accept(w, r, RouteWhatsApp, sid, from, r.PostForm.Get("Body"), workflows.ChannelWhatsApp, emptyTwiML)
}

// gatherTwiML asks for the wish by speech; each answer posts to the gather
// route with the next step number, which makes the inbox key of a spoken
// sentence CallSid + step.
func gatherTwiML(step int, prompt string) string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Response><Gather input="speech" language="de-DE" speechTimeout="auto" action="%s?step=%d" method="POST"><Say language="de-DE">%s</Say></Gather></Response>`,
		RouteVoiceGather, step, html.EscapeString(prompt))
}

func (g *Gateway) voice(w http.ResponseWriter, r *http.Request) {
	sid := r.PostForm.Get("CallSid")
	if sid == "" {
		http.Error(w, "CallSid is required", http.StatusBadRequest)
		return
	}
	fresh, err := g.recordCall(r, sid)
	if err != nil {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if !fresh {
		g.Metrics.duplicates.WithLabelValues("inbox", g.Tenant, RouteVoice).Inc()
		writeTwiML(w, emptyTwiML)
		return
	}
	writeTwiML(w, gatherTwiML(1, "Willkommen! Welchen Termin möchten Sie buchen?"))
}

func (g *Gateway) recordCall(r *http.Request, sid string) (bool, error) {
	customer, err := normalise(r.PostForm.Get("From"), g.Region)
	if err != nil {
		customer = "unknown"
	}
	return g.recordAs(r.Context(), sid+":start", RouteVoice, inboxEvent{Tenant: g.Tenant, Customer: customer,
		Event: workflows.InboundEvent{EventID: sid + ":start", Channel: workflows.ChannelVoice}}, "delivered")
}

func (g *Gateway) voiceGather(w http.ResponseWriter, r *http.Request) {
	sid := r.PostForm.Get("CallSid")
	step, err := strconv.Atoi(r.URL.Query().Get("step"))
	if sid == "" || err != nil || step < 1 {
		http.Error(w, "CallSid and a step are required", http.StatusBadRequest)
		return
	}
	next := gatherTwiML(step+1, "Danke, wir prüfen Ihren Wunsch und schicken Ihnen eine SMS. Möchten Sie noch etwas sagen?")
	g.accept(w, r, RouteVoiceGather, fmt.Sprintf("%s:gather:%d", sid, step), r.PostForm.Get("From"),
		r.PostForm.Get("SpeechResult"), workflows.ChannelVoice, next)
}

// status applies an outbound message status through a monotonic state
// machine: an out-of-order callback never moves a message backwards.
func (g *Gateway) status(w http.ResponseWriter, r *http.Request) {
	sid, st := r.PostForm.Get("MessageSid"), r.PostForm.Get("MessageStatus")
	if sid == "" || st == "" {
		http.Error(w, "MessageSid and MessageStatus are required", http.StatusBadRequest)
		return
	}
	fresh, err := g.recordAs(r.Context(), sid+":"+st, RouteStatus, inboxEvent{Tenant: g.Tenant, Customer: "-",
		Event: workflows.InboundEvent{EventID: sid + ":" + st, Channel: "status", Text: st}}, "delivered")
	if err != nil {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if !fresh {
		g.Metrics.duplicates.WithLabelValues("inbox", g.Tenant, RouteStatus).Inc()
		writeTwiML(w, emptyTwiML)
		return
	}
	state := map[string]string{"sent": "sent", "delivered": "delivered", "read": "delivered", "failed": "failed", "undelivered": "failed"}[st]
	if state != "" {
		_, err = g.Pool.Exec(r.Context(), `UPDATE outbox_messages SET state = $3, provider_id = coalesce(provider_id, $2), updated_at = now()
			WHERE (id = $1 OR provider_id = $2)
			  AND (CASE state WHEN 'pending' THEN 0 WHEN 'sent' THEN 1 WHEN 'review' THEN 1 WHEN 'delivered' THEN 2 ELSE 3 END)
			    < (CASE $3 WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 ELSE 3 END)`,
			r.URL.Query().Get("outbox_id"), sid, state)
		if err != nil {
			// Forget the delivery so Twilio's retry is not dropped as a
			// duplicate: the record and its effect go together.
			_, _ = g.Pool.Exec(r.Context(), `DELETE FROM inbox_events WHERE provider = 'twilio' AND event_id = $1`, sid+":"+st)
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
	}
	g.Metrics.accepted.WithLabelValues(RouteStatus).Inc()
	writeTwiML(w, emptyTwiML)
}

package channels

import (
	"net/http"

	"github.com/bookonce/bookonce/consent"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
)

// RouteSMS receives the SMS a customer sends to one of the shop's
// numbers (the number's "A message comes in" webhook): a customer who got
// the payment link or a reminder by SMS answers there.
const RouteSMS = "/webhooks/twilio/sms"

// sms takes a customer's SMS as the WhatsApp route takes a message: the
// conversation answers it, by SMS. A keyword Twilio handles itself on SMS
// (STOP, START, HELP and their synonyms, or the Messaging Service's own
// words it names in OptOutType) is not the conversation's: Twilio has
// already changed what the number may send and answered the customer, and
// any answer of ours to a STOP would be refused. bookonce records the
// change in the consent trail, so that reminders on every channel follow
// what Twilio enforces on SMS.
func (g *Gateway) sms(w http.ResponseWriter, r *http.Request) {
	d := delivery{route: RouteSMS, id: r.PostForm.Get("MessageSid"), from: r.PostForm.Get("From"), tenant: g.owner(r),
		text: r.PostForm.Get("Body"), channel: workflows.ChannelSMS}
	if kw := twilio.HandledKeyword(r.PostForm); kw != "" {
		g.providerKeyword(w, r, d, kw)
		return
	}
	g.accept(w, r, d, func(reason string) string {
		if reason == ReasonUnconfiguredNumber {
			return unconfiguredWhatsApp // the same words, as an SMS
		}
		return emptyTwiML
	})
}

// providerKeyword records a keyword Twilio handled: the consent change
// (idempotent per message, so a redelivery records nothing twice), then
// the inbox row as done. Either failing answers 503, and Twilio's retry
// records what is missing. HELP changes nothing.
func (g *Gateway) providerKeyword(w http.ResponseWriter, r *http.Request, d delivery, kw string) {
	ev, reason := g.event(r, d)
	if action := consentAction(kw); action != "" && reason == "" {
		_, err := (&consent.Store{Pool: g.Pool, Keys: g.keys()}).Record(r.Context(), consent.Change{Tenant: ev.Tenant, Customer: ev.Customer,
			Action: action, Channel: string(d.channel), EventID: ev.Event.EventID, At: ev.Event.ReceivedAt})
		if err != nil {
			g.log().Error("consent not recorded", "route", d.route, "keyword", kw, "err", err)
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
	}
	fresh, err := g.recordAs(r.Context(), ev.Event.EventID, d.route, ev, "delivered")
	if err != nil {
		g.log().Error("inbox insert failed", "route", d.route, "err", err)
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if !fresh {
		g.Metrics.duplicates.WithLabelValues("inbox", ev.Tenant, d.route).Inc()
	} else {
		g.Metrics.accepted.WithLabelValues(d.route).Inc()
	}
	if reason != "" {
		g.unroutable(ev)
	}
	writeTwiML(w, emptyTwiML) // Twilio has answered the customer
}

// consentAction is the consent change of a keyword Twilio handled.
func consentAction(kw string) consent.Action {
	switch kw {
	case twilio.OptOutStop:
		return consent.OptOut
	case twilio.OptOutStart:
		return consent.OptIn
	}
	return ""
}

package channels

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// DefaultVoiceConfirmWait is how long a caller waits on the line for the
// booking's outcome when Gateway.VoiceConfirmWait is unset: a card
// deposit's booking usually confirms well within it.
const DefaultVoiceConfirmWait = 6 * time.Second

// voicePause is the <Pause> between two polls of the status route.
const voicePause = time.Second

// statusLookupTimeout bounds one poll's lookups: the caller hears silence
// meanwhile, and the next poll asks again.
const statusLookupTimeout = 2 * time.Second

// What a caller waiting for the booking was told
// (bookonce_voice_outcomes_total{outcome}).
const (
	VoiceOutcomeConfirmed     = "confirmed"
	VoiceOutcomeAlreadyBooked = "already_booked"
	VoiceOutcomeNotBooked     = "not_booked"
	VoiceOutcomeInReview      = "in_review"
	// VoiceOutcomeReply: the conversation answered without a booking (a
	// question, a similar request under review); its reply is said.
	VoiceOutcomeReply = "reply"
	// VoiceOutcomeFollows: no outcome within the wait; the caller is told
	// the written confirmation follows.
	VoiceOutcomeFollows = "follows"
	// VoiceOutcomePaymentLink: the booking waits for the deposit, whose
	// link is on its way to the caller; paying it confirms.
	VoiceOutcomePaymentLink = "payment_link"
)

// polls is how many status polls the wait allows (at least one).
func (g *Gateway) polls() int {
	wait := g.VoiceConfirmWait
	if wait <= 0 {
		wait = DefaultVoiceConfirmWait
	}
	return max(1, int((wait+voicePause-1)/voicePause))
}

// voiceStatus answers one poll of a caller waiting for the outcome of the
// sentence of ?step=: the outcome once there is one, else another pause
// and poll n+1, until the wait is over. It only reads (the inbox, the
// outbox, the appointment's published status), so a repeated or
// redelivered poll has no effect; the written confirmation is the
// outbox's, sent once whatever is said here. Every answer is TwiML.
func (g *Gateway) voiceStatus(w http.ResponseWriter, r *http.Request) {
	p := g.owner(r)
	if p == nil {
		writeTwiML(w, unconfiguredVoice)
		return
	}
	who := identify(r.PostForm.Get("From"), g.Region)
	if who.Number == "" {
		writeTwiML(w, sorryTwiML(p, who.Reason))
		return
	}
	sid := r.PostForm.Get("CallSid")
	step, serr := strconv.Atoi(r.URL.Query().Get("step"))
	n, nerr := strconv.Atoi(r.URL.Query().Get("n"))
	if sid == "" || serr != nil || nerr != nil || step < 1 || n < 1 {
		// Signed, so Twilio's own request: nothing to look up, and a
		// clear end rather than a loop.
		g.log().Warn("voice status poll without call, step or poll number", "query", r.URL.RawQuery)
		writeTwiML(w, sorryTwiML(p, ReasonMissingID))
		return
	}
	if n > g.polls() {
		g.tell(w, p, step, VoiceOutcomeFollows, say(p, tenants.TemplateVoiceConfirmFollows))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), statusLookupTimeout)
	defer cancel()
	outcome, text, err := g.callOutcome(ctx, p, who.Number, eventKey(fmt.Sprintf("%s:gather:%d", sid, step)))
	if err != nil {
		// Not known yet, as far as the caller can tell: the next poll asks again.
		g.log().Warn("voice status not read", "customer", mask.Phones(who.Number), "err", err)
	}
	switch {
	case outcome != "":
		g.tell(w, p, step, outcome, text)
	case n >= g.polls():
		g.tell(w, p, step, VoiceOutcomeFollows, say(p, tenants.TemplateVoiceConfirmFollows))
	default:
		writeTwiML(w, waitTwiML(p, step, n+1))
	}
}

// tell says text and listens for the caller's next sentence (step+1); a
// caller who says nothing more ends the call.
func (g *Gateway) tell(w http.ResponseWriter, p *tenants.Profile, step int, outcome, text string) {
	g.Metrics.voice.WithLabelValues(outcome).Inc()
	writeTwiML(w, gatherSaying(p, step+1, text))
}

// voiceOutcomeSQL reads in one round trip what the sentence eventID led
// to: the booking intent it was decided into (new or merged), whether
// that appointment's confirmation is reserved in the outbox (the record
// of a confirmed booking), whether its payment link is (the deposit
// waits for the caller to pay; the deposit saga's kind
// activities.MessageKindPaymentLink), and the conversation's reply to the
// sentence.
const voiceOutcomeSQL = `SELECT i.workflow_id, i.service, i.slot_start, c.id IS NOT NULL, l.id IS NOT NULL, r.body
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (SELECT workflow_id, service, slot_start FROM booking_intents
	WHERE tenant_id = $1 AND customer = $2 AND $3 = ANY(events) ORDER BY created_at DESC LIMIT 1) AS i ON true
LEFT JOIN outbox_messages c ON c.tenant_id = $1 AND c.reference = i.workflow_id AND c.kind = 'confirmation'
LEFT JOIN LATERAL (SELECT id FROM outbox_messages WHERE tenant_id = $1 AND reference = i.workflow_id AND kind = 'payment_link' LIMIT 1) AS l ON true
LEFT JOIN outbox_messages r ON r.tenant_id = $1 AND r.reference = $4 AND r.kind = $5`

// callOutcome is what to tell the caller about the sentence eventID, as
// VoiceOutcome… and its text; "" while there is nothing to tell yet.
func (g *Gateway) callOutcome(ctx context.Context, p *tenants.Profile, customer, eventID string) (string, string, error) {
	var workflowID, service, reply *string
	var slot *time.Time
	var confirmed, linkSent bool
	key, err := g.keys().Key(p.ID, customer)
	if err != nil {
		return "", "", fmt.Errorf("voice outcome: %w", err)
	}
	err = g.Pool.QueryRow(ctx, voiceOutcomeSQL, p.ID, customer, eventID,
		conversation.WorkflowID(p.ID, key), "reply:"+eventID).Scan(&workflowID, &service, &slot, &confirmed, &linkSent, &reply)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", "", fmt.Errorf("voice outcome: %w", err)
	}
	if workflowID == nil {
		if reply != nil {
			return VoiceOutcomeReply, *reply, nil
		}
		return "", "", nil
	}
	data := spokenSlot(p, *service, *slot)
	if m, ok := p.Deposit(*service); ok && m.Amount > 0 {
		data.Amount = m.Format(p.Language)
	}
	if confirmed {
		return VoiceOutcomeConfirmed, sayWith(p, tenants.TemplateVoiceConfirmed, data), nil
	}
	status, _, err := workflows.PublishedStatus(ctx, g.Temporal, *workflowID)
	if err != nil {
		return "", "", err
	}
	outcome, text, err := appointmentOutcome(p, status, data, reply)
	if outcome == "" && err == nil && linkSent {
		// Still running and waiting for the deposit: without being told,
		// the caller would wait for a confirmation that needs them to pay.
		return VoiceOutcomePaymentLink, sayWith(p, tenants.TemplateVoicePaymentLink, data), nil
	}
	return outcome, text, err
}

// appointmentOutcome is what to tell about an appointment that has not
// reserved its confirmation: its end, or nothing while it runs. An
// appointment that never started (status "") whose conversation already
// replied could not be started; the reply says so.
func appointmentOutcome(p *tenants.Profile, status workflows.BookingStatus, data tenants.MessageData, reply *string) (string, string, error) {
	switch status {
	case "":
		if reply != nil {
			return VoiceOutcomeReply, *reply, nil
		}
	case workflows.StatusConfirmed: // published after the confirmation was reserved; seen between the two reads
		return VoiceOutcomeConfirmed, sayWith(p, tenants.TemplateVoiceConfirmed, data), nil
	case workflows.StatusAlreadyBooked:
		return VoiceOutcomeAlreadyBooked, sayWith(p, tenants.TemplateVoiceAlreadyBooked, data), nil
	case workflows.StatusRejected, workflows.StatusPaymentFailed, workflows.StatusCancelled:
		return VoiceOutcomeNotBooked, sayWith(p, tenants.TemplateVoiceNotBooked, data), nil
	case workflows.StatusNeedsReview:
		return VoiceOutcomeInReview, sayWith(p, tenants.TemplateVoiceInReview, data), nil
	}
	return "", "", nil
}

// spokenSlot is the template data naming a service and its slot as a
// caller hears them: the tenant's label and the local time in words a
// speech engine reads well ("Dienstag, 8.12. um 14:00 Uhr").
func spokenSlot(p *tenants.Profile, service string, start time.Time) tenants.MessageData {
	local := start.In(p.Location)
	when := fmt.Sprintf("%s, %d.%d. um %s Uhr", germanWeekdays[local.Weekday()], local.Day(), int(local.Month()), local.Format("15:04"))
	if p.Language == tenants.English {
		when = local.Format("Monday 2 January at 15:04")
	}
	return tenants.MessageData{Service: p.Label(service, p.Language), When: when}
}

var germanWeekdays = [...]string{"Sonntag", "Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag"}

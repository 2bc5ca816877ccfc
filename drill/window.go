package drill

import (
	"context"
	"fmt"
	"time"

	"github.com/bookonce/bookonce/internal/mask"
)

// Some customers wrote the shop long before their booking's messages go
// out: a booking made a week ago gets its reminder the day before, when
// WhatsApp's 24-hour window has long closed and only the shop's approved
// template reaches them. The drill plays that for a share of its one-
// message WhatsApp customers: once their message is accepted it moves
// their last message back by a day and more, at the fake Twilio (which
// then refuses free text, 63016) and in the inbox (from which bookonce
// reads the window). Every later message to them (the link, the
// confirmation, the reminders) must leave as a template: the report's
// "messages refused by the provider's rules" stays 0.

// DefaultStaleWindowShare is the percent of one-message WhatsApp
// customers whose window has closed before their booking's messages.
const DefaultStaleWindowShare = 20

// staleBy is how far such a customer's last message is moved back.
const staleBy = 25 * time.Hour

// DefaultStopShare is the percent of one-message WhatsApp customers who
// write STOPP right after their wish: no reminder may reach them once
// bookonce recorded it (optout.go).
const DefaultStopShare = 5

// markWindows picks, among the WhatsApp scenarios without a later change
// (a change is a new message, which opens the window again), stale
// percent whose window closes and, apart from them, stop percent who opt
// out.
func markWindows(all []Scenario, stale, stop int) {
	for i, s := range all {
		if s.Kind != WhatsApp || s.Change != nil {
			continue
		}
		p := s.Phrasing % 100
		all[i].StaleWindow = p < stale
		all[i].Stop = p >= stale && p < stale+stop
	}
}

// closeWindow moves the customer's last message to the shop back by staleBy,
// at the fake Twilio and in the inbox, once the answer to that message has
// left: a reply leaves seconds after the message it answers, inside the
// window, as in life; what follows later (the link, the confirmation,
// the reminders) meets the closed window. It waits out a database outage.
func (e *env) closeWindow(ctx context.Context, s Scenario) error {
	customer := s.Customer
	key, err := e.cfg.CustomerKeys().Key(s.tenant(), customer)
	if err != nil {
		return fmt.Errorf("close the window of %s: %w", customer, err)
	}
	if err := e.awaitAnswer(ctx, s); err != nil {
		return err
	}
	e.twilio.Backdate("whatsapp:"+customer, "whatsapp:"+s.shop(), staleBy)
	for {
		e.db.wait(ctx)
		_, err = e.pool.Exec(ctx, `UPDATE inbox_events SET received_at = received_at - $3::interval
			WHERE tenant_id = $1 AND customer_key = $2`, s.tenant(), string(key), fmt.Sprintf("%d seconds", int(staleBy.Seconds())))
		if err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// answerWait bounds how long closeWindow waits for the answer to a
// customer's message (an outage may hold it back for minutes).
const answerWait = 5 * time.Minute

// awaitAnswer returns once bookonce's answer to the customer's message
// has left the outbox (sent, or refused by Twilio) and no other answer is
// pending: not merely once some message to them is at Twilio, since under
// faults the booking's payment link may overtake the answer, which would
// then meet the closed window as no real customer's answer would.
func (e *env) awaitAnswer(ctx context.Context, s Scenario) error {
	deadline := time.Now().Add(answerWait)
	conv := e.conversationID(s)
	for {
		var left, pending int
		e.db.wait(ctx)
		err := e.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state <> 'pending'), count(*) FILTER (WHERE state = 'pending')
			FROM outbox_messages WHERE tenant_id = $1 AND reference = $2 AND kind LIKE 'reply:%'`, s.tenant(), conv).Scan(&left, &pending)
		if err == nil && left > 0 && pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer to %s within %s: its window stays open", mask.Phones(s.Customer), answerWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

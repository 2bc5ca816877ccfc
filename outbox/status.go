package outbox

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// CallbackParam is the query parameter of a status callback URL that
// names the outbox message (see StatusCallback).
const CallbackParam = "outbox_id"

// StatusCallback returns a Sender.CallbackURL for the status webhook at
// route under publicBaseURL: <base><route>?outbox_id=<id>. The route is
// the gateway's, passed in by whoever wires the two together.
func StatusCallback(publicBaseURL, route string) func(msgID string) string {
	base := strings.TrimRight(publicBaseURL, "/") + route + "?" + CallbackParam + "="
	return func(id string) string { return base + url.QueryEscape(id) }
}

// deliveryStates maps the provider's message statuses (Twilio's
// MessageStatus) to outbox states. Others (queued, accepted, sending)
// say nothing the outbox records.
var deliveryStates = map[string]string{
	"sent": "sent", "delivered": "delivered", "read": "delivered",
	"failed": "failed", "undelivered": "failed",
}

// stateRank orders the states a status may move a message through; a
// message only ever moves up, so an out-of-order or repeated callback
// changes nothing. 'review' ranks with 'sent', so only a later status
// (delivered, failed) takes a message out of review.
const stateRank = `CASE state WHEN 'pending' THEN 0 WHEN 'sent' THEN 1 WHEN 'review' THEN 1 WHEN 'delivered' THEN 2 ELSE 3 END`

// Failure is why the provider could not deliver a message it accepted:
// its error code and what that means, for people.
type Failure struct {
	Code, Reason string
}

// RecordStatus applies a provider's delivery status to the message named
// by id (the callback URL's CallbackParam) or by the provider's message
// ID, and records that ID if the message had none yet. It never moves a
// message backwards; a status the outbox does not record changes nothing.
// f says why a failed message failed (the provider's error code, and
// what it means for the ops page); it is kept only with that state.
func (s *Store) RecordStatus(ctx context.Context, id, providerID, status string, f Failure) error {
	state, ok := deliveryStates[status]
	if !ok {
		return nil
	}
	_, err := s.Pool.Exec(ctx, `UPDATE outbox_messages SET state = $3, provider_id = coalesce(provider_id, $2), updated_at = now(),
		    last_error = CASE WHEN $3 = 'failed' AND $4 <> '' THEN $4 ELSE last_error END,
		    failure_code = CASE WHEN $3 = 'failed' THEN nullif($5, '') ELSE failure_code END
		WHERE (id = $1 OR provider_id = $2)
		  AND (`+stateRank+`) < (CASE $3 WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 ELSE 3 END)`,
		id, providerID, state, f.Reason, f.Code)
	if err != nil {
		return fmt.Errorf("record status %s of outbox message %s: %w", status, id, err)
	}
	return nil
}

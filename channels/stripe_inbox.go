package channels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// recordPayment records a payment webhook in the inbox (provider stripe,
// kind = event type, no customer); false when its event ID is there
// already: a redelivery.
func (g *Gateway) recordPayment(ctx context.Context, p paymentInbox, kind, state string) (bool, error) {
	payload, err := json.Marshal(p)
	if err != nil {
		return false, err
	}
	tag, err := g.Pool.Exec(ctx, `INSERT INTO inbox_events (provider, event_id, tenant_id, kind, customer, channel, payload, state, delivered_at)
		VALUES ($1, $2, $3, $4, '', $5, $6, $7, CASE WHEN $7 = 'pending' THEN NULL ELSE now() END)
		ON CONFLICT (provider, event_id) DO NOTHING`,
		providerStripe, p.Event.EventID, p.Tenant, kind, paymentChannel, payload, state)
	if err != nil {
		return false, fmt.Errorf("inbox: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// deliverPaymentNow signals a freshly recorded payment event and settles
// its row; on failure the row stays pending for the relay.
func (g *Gateway) deliverPaymentNow(ctx context.Context, p paymentInbox) error {
	state, err := g.deliverPayment(ctx, g.Pool, p)
	if err != nil {
		return err
	}
	if state == stateUnmatched {
		g.paymentUnmatched(p)
	}
	return nil
}

// deliverPayment signals the event to its payment workflow and marks the
// row delivered. A workflow that has ended takes no signal: its event is
// delivered all the same, as late (see lateOrUnmatched); one that never
// existed makes the row unmatched. Either way signalling again would never
// succeed, and the provider must not retry it forever. Any other failure
// (Temporal unreachable) leaves the row pending. The workflow reads the
// session or intent itself, so a second delivery or an out-of-order one
// changes nothing.
func (g *Gateway) deliverPayment(ctx context.Context, q execer, p paymentInbox) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	state := stateDelivered
	err := g.Temporal.SignalWorkflow(ctx, deposit.WorkflowID(p.Reference), "", deposit.SignalEvent, p.Event)
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		state, err = g.lateOrUnmatched(ctx, p)
	}
	if err != nil {
		return "", fmt.Errorf("signal payment workflow of %s: %w", logReference(p.Reference), err)
	}
	_, err = q.Exec(ctx, `UPDATE inbox_events SET state = $2, delivered_at = now() WHERE provider = $3 AND event_id = $1 AND state = 'pending'`,
		p.Event.EventID, state, providerStripe)
	if err != nil {
		return "", fmt.Errorf("inbox: mark %s %s: %w", p.Event.EventID, state, err)
	}
	return state, nil
}

// lateOrUnmatched settles an event whose payment workflow took no signal.
// A workflow that exists has ended: it read the link itself before it
// decided, and closed it before giving up, so its late events are echoes
// of its own steps (the capture's payment_intent.succeeded, the second of
// two hints); they are delivered, not shown to a person. A card deposit
// that its appointment runs itself has no payment workflow: the
// authorisation's events echo the appointment's own steps. A live
// authorisation without a running saga is the reconciler's to void. Only
// a reference no workflow ever had is unmatched.
func (g *Gateway) lateOrUnmatched(ctx context.Context, p paymentInbox) (string, error) {
	// The appointment first: a card's echo, the common case, costs one
	// lookup; a payment saga without one (an older run's) is asked after.
	for _, id := range []string{reference.SagaOf(p.Reference), deposit.WorkflowID(p.Reference)} {
		_, err := g.Temporal.DescribeWorkflowExecution(ctx, id, "")
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			continue
		case err != nil:
			return "", err
		}
		g.log().Debug("payment webhook about a payment no saga waits for; delivered as an echo", "event", p.Event.EventID, "type", p.Event.Type)
		return stateDelivered, nil
	}
	return stateUnmatched, nil
}

// paymentUnmatched counts and logs a payment event no workflow waited for
// (no personal data: the event's ID and type, the masked reference). The
// ops page lists it.
func (g *Gateway) paymentUnmatched(p paymentInbox) {
	g.Metrics.unmatched.WithLabelValues(p.Event.Type).Inc()
	g.log().Warn("payment webhook matches no payment workflow; kept as unmatched for the ops page",
		"event", p.Event.EventID, "type", p.Event.Type, "reference", logReference(p.Reference))
}

// relayPayment is the relay's delivery of a pending payment event, in the
// transaction that holds its row.
func (g *Gateway) relayPayment(ctx context.Context, q execer, raw []byte) (func(), error) {
	var p paymentInbox
	if err := json.Unmarshal(raw, &p); err != nil || p.Event.EventID == "" || p.Reference == "" {
		return nil, fmt.Errorf("inbox: unreadable pending payment event: %v", err)
	}
	state, err := g.deliverPayment(ctx, q, p)
	if err != nil {
		return nil, err
	}
	if state == stateUnmatched {
		return func() { g.paymentUnmatched(p) }, nil
	}
	return func() {}, nil
}

package channels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// inboxEvent is what the inbox keeps of a delivery: enough to hand it to
// the conversation again if Temporal was unreachable.
type inboxEvent struct {
	Tenant   string                    `json:"tenant"`
	Customer string                    `json:"customer"`
	Event    conversation.InboundEvent `json:"event"`
	// Unroutable names why the event went to no conversation (Reason…);
	// RawFrom then keeps the caller ID as Twilio sent it, for a person.
	Unroutable string `json:"unroutable,omitempty"`
	RawFrom    string `json:"raw_from,omitempty"`
}

// recordAs records with an initial state: events with nothing to hand on
// (a call starting, a status callback) are recorded as delivered, so the
// relay never sends them to a conversation.
func (g *Gateway) recordAs(ctx context.Context, eventID, kind string, ev inboxEvent, state string) (bool, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, err
	}
	cols := g.sealInbox(providerTwilio, eventID, ev.Customer, payload)
	tag, err := g.Pool.Exec(ctx, `INSERT INTO inbox_events (provider, event_id, tenant_id, kind, customer, channel, payload, sealed, state, customer_key)
		VALUES ('twilio', $1, $2, $3, $4, $5, $6, $7, $8, nullif($9, '')) ON CONFLICT (provider, event_id) DO NOTHING`,
		eventID, ev.Tenant, kind, cols.customer, string(ev.Event.Channel), cols.payload, cols.sealed, state, g.windowKey(kind, ev))
	if err != nil {
		return false, fmt.Errorf("inbox: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// forget removes a recorded delivery whose effect failed, so that
// Twilio's retry is not dropped as a duplicate: the record and its effect
// go together. If even that fails, the retry is dropped and the log says
// which delivery was lost.
func (g *Gateway) forget(ctx context.Context, eventID string) {
	if _, err := g.Pool.Exec(ctx, `DELETE FROM inbox_events WHERE provider = 'twilio' AND event_id = $1`, eventID); err != nil {
		g.log().Error("inbox: failed delivery not forgotten; its retry will be dropped", "event", eventID, "err", err)
	}
}

// deliver hands an inbox event to the customer's conversation workflow
// (started if needed) and marks it delivered. On failure the row stays
// pending for the relay; the conversation ignores an event ID it has seen,
// so a second delivery has no effect.
func (g *Gateway) deliver(ctx context.Context, ev inboxEvent) error {
	return g.deliverWith(ctx, g.Pool, ev)
}

// execer is a pool or the relay's transaction (which holds the row lock).
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func (g *Gateway) deliverWith(ctx context.Context, q execer, ev inboxEvent) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	key, err := g.keys().Key(ev.Tenant, ev.Customer)
	if err != nil {
		return fmt.Errorf("conversation of %s: %w", mask.Phones(ev.Customer), err)
	}
	// Always the keyed ID: a conversation still running under the legacy
	// ID is asked by the keyed one for its state (docs/privacy.md).
	id := conversation.WorkflowID(ev.Tenant, key)
	in := g.conversationInput(ev)
	in.CustomerKey = key
	_, err = g.Temporal.SignalWithStartWorkflow(ctx, id, conversation.SignalInbound, ev.Event, client.StartWorkflowOptions{
		ID: id, TaskQueue: g.TaskQueue,
		StaticSummary: "Conversation with " + mask.Phones(ev.Customer),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.CustomerKeyKey.ValueSet(string(key)), workflows.CustomerMaskedKey.ValueSet(mask.Phones(ev.Customer))),
	}, conversation.WorkflowName, in)
	if err != nil {
		return fmt.Errorf("signal conversation %s: %w", mask.Phones(ev.Customer), err)
	}
	_, err = q.Exec(ctx, `UPDATE inbox_events SET state = 'delivered', delivered_at = now() WHERE provider = 'twilio' AND event_id = $1`, ev.Event.EventID)
	return err
}

// conversationInput starts a conversation with its tenant's terms as
// configured now (language, time zone, wording, deposits per service);
// each understood message refreshes them. A tenant removed since the
// message arrived gets none: its messages are then not understood, and
// nothing is booked for it.
func (g *Gateway) conversationInput(ev inboxEvent) conversation.Input {
	in := conversation.Input{Tenant: ev.Tenant, Customer: ev.Customer, PaymentMethod: g.PaymentMethod}
	if g.Tenants != nil {
		if p, ok := g.Tenants.Get(ev.Tenant); ok {
			in.Terms = p.Terms()
			in.Timezone = p.Timezone
		}
	}
	return in
}

// RelayPending delivers inbox events that stayed pending (Temporal was
// unreachable when they arrived), oldest first, by provider: a Twilio
// event to its conversation, a payment event to its payment workflow. One
// row per transaction:
// the row is locked with SKIP LOCKED (several gateways never deliver one
// row at the same time) and marked delivered in the same transaction, so a
// failure leaves only that row pending and the rows before it done. A
// row whose sealed payload does not open is reported and passed over, so
// it does not hold up the rows behind it.
func (g *Gateway) RelayPending(ctx context.Context, olderThan time.Duration) (int, error) {
	n := 0
	var unreadable []error
	skip := []string{} // never nil: "<> ALL(NULL)" would match nothing
	for n < 50 && len(skip) < 50 {
		delivered, err := g.relayOne(ctx, olderThan, skip)
		var u *unreadableEvent
		if errors.As(err, &u) {
			unreadable, skip = append(unreadable, err), append(skip, u.key)
			continue
		}
		if err != nil || !delivered {
			return n, errors.Join(append(unreadable, err)...)
		}
		n++
	}
	return n, errors.Join(unreadable...)
}

func (g *Gateway) relayOne(ctx context.Context, olderThan time.Duration, skip []string) (bool, error) {
	tx, err := g.Pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var provider, eventID string
	var raw, sealed []byte
	err = tx.QueryRow(ctx, `SELECT provider, event_id, payload, sealed FROM inbox_events WHERE state = 'pending' AND received_at < $1
		AND provider || ':' || event_id <> ALL($2)
		ORDER BY received_at LIMIT 1 FOR UPDATE SKIP LOCKED`, g.now().Add(-olderThan), skip).Scan(&provider, &eventID, &raw, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if raw, err = g.openInbox(provider, eventID, raw, sealed); err != nil {
		return false, &unreadableEvent{key: provider + ":" + eventID, err: err}
	}
	after := func() {}
	if provider == providerStripe {
		after, err = g.relayPayment(ctx, tx, raw)
	} else {
		err = g.relayConversation(ctx, tx, raw)
	}
	if err != nil {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return false, err
	}
	after() // counted once the row's new state is committed
	return true, nil
}

// relayConversation is the relay's delivery of a pending Twilio event to
// its conversation, in the transaction that holds its row.
func (g *Gateway) relayConversation(ctx context.Context, q execer, raw []byte) error {
	var ev inboxEvent
	if err := json.Unmarshal(raw, &ev); err != nil || ev.Event.EventID == "" {
		return fmt.Errorf("inbox: unreadable pending event: %v", err)
	}
	return g.deliverWith(ctx, q, ev)
}

// RunRelay calls RelayPending every interval until ctx ends.
func (g *Gateway) RunRelay(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := g.RelayPending(ctx, interval); err != nil {
				g.log().Warn("inbox relay", "err", err)
			} else if n > 0 {
				g.log().Info("inbox relay delivered pending events", "count", n)
			}
		}
	}
}

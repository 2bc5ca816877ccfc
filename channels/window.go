package channels

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/outbox"
)

// WhatsApp's customer service window opens with each message a customer
// sends the shop on WhatsApp. The inbox is where those messages are
// recorded, so the inbox answers when a customer last wrote: each such
// row keeps the customer's key (sealed rows hold no number to search by).

// windowKey is the customer key an inbox row of kind keeps: a customer's
// WhatsApp message opens the window; other events (calls, status
// callbacks, unroutable deliveries) keep none. A key that cannot be made
// is none: the window then counts as closed, and the relay sends an
// approved template, which reaches the customer either way.
func (g *Gateway) windowKey(kind string, ev inboxEvent) string {
	if kind != RouteWhatsApp || ev.Unroutable != "" || ev.Customer == "" {
		return ""
	}
	k, err := g.keys().Key(ev.Tenant, ev.Customer)
	if err != nil {
		return ""
	}
	return string(k)
}

// ServiceWindow answers from the inbox whether a customer's WhatsApp
// window with a tenant is open (outbox.Sender.Window).
type ServiceWindow struct {
	Pool *pgxpool.Pool
	Keys *customerid.Keyer
}

// Open reports whether recipient ("whatsapp:+49…" or "+49…") wrote to
// tenant on WhatsApp late enough that free-form text sent at now still
// reaches them (outbox.WindowOpenSince).
func (w ServiceWindow) Open(ctx context.Context, tenant, recipient string, now time.Time) (bool, error) {
	keys := w.Keys
	if keys == nil {
		keys = customerid.Dev()
	}
	k, err := keys.Key(tenant, strings.TrimPrefix(recipient, "whatsapp:"))
	if err != nil {
		return false, nil // no key, no window: the template goes
	}
	var open bool
	err = w.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM inbox_events
		WHERE tenant_id = $1 AND customer_key = $2 AND received_at >= $3)`, tenant, string(k), outbox.WindowOpenSince(now)).Scan(&open)
	if err != nil {
		return false, fmt.Errorf("whatsapp window: %w", err)
	}
	return open, nil
}

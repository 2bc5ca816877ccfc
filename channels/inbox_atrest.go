package channels

import (
	"fmt"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/payloadcrypt"
)

// inboxTable is the table name a sealed inbox payload is bound to.
const inboxTable = "inbox_events"

// inboxColumns are the values stored for a delivery's personal fields.
type inboxColumns struct {
	customer string
	payload  []byte // jsonb
	sealed   []byte
}

// sealInbox returns the columns to store for a Twilio delivery. Without a
// sealer: the customer's number and the payload in clear. With one: the
// payload (message text, numbers) sealed, bound to the row's provider and
// event ID; the payload column is an empty object and the customer column
// keeps only the masked number, which is all the ops page shows. Payment
// events are not sealed: they carry no personal data, and the ops page
// reads their reference from the payload.
func (g *Gateway) sealInbox(provider, eventID, customer string, payload []byte) inboxColumns {
	if g.Sealer == nil {
		return inboxColumns{customer: customer, payload: payload}
	}
	return inboxColumns{
		customer: mask.Phones(customer),
		payload:  []byte("{}"),
		sealed:   g.Sealer.Seal(payload, payloadcrypt.AAD(inboxTable, provider, eventID)),
	}
}

// openInbox returns a row's payload: the sealed one when the row has it,
// else the payload column (a row in clear: a payment event, or written
// before the keys were configured or without them).
func (g *Gateway) openInbox(provider, eventID string, payload, sealed []byte) ([]byte, error) {
	if sealed == nil {
		return payload, nil
	}
	return g.Sealer.Open(sealed, payloadcrypt.AAD(inboxTable, provider, eventID))
}

// unreadableEvent is a pending row whose sealed payload did not open (a
// key missing in this process, a tampered or moved blob): the relay
// reports it and goes on with the rows behind it; it stays pending.
type unreadableEvent struct {
	key string // provider:event_id
	err error
}

func (u *unreadableEvent) Error() string {
	return fmt.Sprintf("inbox: pending event %s: %v", u.key, u.err)
}

func (u *unreadableEvent) Unwrap() error { return u.err }

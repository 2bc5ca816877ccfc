package outbox

import (
	"encoding/json"
	"fmt"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/payloadcrypt"
)

// sealedTable is the table name a sealed message is bound to.
const sealedTable = "outbox_messages"

// personal is what a row seals: the recipient's number, the text and
// the fields that fill its template.
type personal struct {
	Recipient string            `json:"recipient"`
	Body      string            `json:"body"`
	Fields    map[string]string `json:"fields,omitempty"`
}

// columns are the values stored for a message's personal fields.
type columns struct {
	recipient, body string
	fields          []byte // JSON; nil when sealed or none
	sealed          []byte
}

// seal returns the columns to store for message id. Without a sealer
// they are the recipient and body in clear. With one, recipient and body
// are sealed (bound to the message ID); the recipient column keeps only
// the masked number, which is all the ops page shows, and the body column
// is empty.
func (s *Store) seal(id, recipient, body string, fields map[string]string) (columns, error) {
	if s.Sealer == nil {
		c := columns{recipient: recipient, body: body}
		if fields != nil {
			b, err := json.Marshal(fields)
			if err != nil {
				return columns{}, fmt.Errorf("outbox message %s: fields: %w", id, err)
			}
			c.fields = b
		}
		return c, nil
	}
	plain, err := json.Marshal(personal{Recipient: recipient, Body: body, Fields: fields})
	if err != nil {
		return columns{}, fmt.Errorf("seal outbox message %s: %w", id, err)
	}
	return columns{recipient: mask.Phones(recipient), sealed: s.Sealer.Seal(plain, payloadcrypt.AAD(sealedTable, id))}, nil
}

// Open returns the recipient, body and template fields of message id as
// read from its row's recipient, body, fields and sealed columns: the
// sealed values when the row has them, else the columns themselves (a
// row written in clear, before the keys were configured or without
// them).
func (s *Store) Open(id, recipient, body string, fields, sealed []byte) (string, string, map[string]string, error) {
	if sealed == nil {
		var f map[string]string
		if fields != nil {
			if err := json.Unmarshal(fields, &f); err != nil {
				return "", "", nil, fmt.Errorf("open outbox message %s: fields: %w", id, err)
			}
		}
		return recipient, body, f, nil
	}
	plain, err := s.Sealer.Open(sealed, payloadcrypt.AAD(sealedTable, id))
	if err != nil {
		return "", "", nil, fmt.Errorf("open outbox message %s: %w", id, err)
	}
	var p personal
	if err := json.Unmarshal(plain, &p); err != nil {
		return "", "", nil, fmt.Errorf("open outbox message %s: %w", id, err)
	}
	return p.Recipient, p.Body, p.Fields, nil
}

package idempotency

import (
	"github.com/bookonce/bookonce/internal/payloadcrypt"
)

// sealedTable is the table name a sealed response is bound to.
const sealedTable = "idempotency_keys"

// responseAAD binds a sealed response to its key's row: a response body
// copied to another tenant's, operation's or key's row does not open.
func responseAAD(sc scope) []byte {
	return payloadcrypt.AAD(sealedTable, sc.tenant, sc.operation, sc.key)
}

// sealBody returns what to store for a response body: without a sealer
// the body in response_body and no sealed blob; with one an empty
// response_body (the column is NOT NULL for completed rows) and the body
// sealed, because a response can quote a customer's phone number.
func (s *Store) sealBody(sc scope, body []byte) (plain, sealed []byte) {
	if s.sealer == nil {
		return body, nil
	}
	return []byte{}, s.sealer.Seal(body, responseAAD(sc))
}

// openBody returns a stored response body: the sealed one when the row
// has it, else response_body (a row written in clear, before the keys
// were configured or without them). The bytes are exactly those stored,
// so a replay stays byte-identical.
func (s *Store) openBody(sc scope, plain, sealed []byte) ([]byte, error) {
	if sealed == nil {
		return plain, nil
	}
	return s.sealer.Open(sealed, responseAAD(sc))
}

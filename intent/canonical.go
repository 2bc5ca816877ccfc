package intent

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/bookonce/bookonce/internal/customerid"
)

// Canonical is the intent that identifies a booking: tenant, customer,
// service, resource ("" if none), slot start in UTC truncated to the
// minute. Nothing about phrasing, language or channel belongs here, so
// that the same wish always has the same identity (principle 1).
type Canonical struct {
	Tenant string
	// Customer is the E.164 number; only LegacyID hashes it.
	Customer string
	// CustomerKey is the customer's keyed hash (package customerid), which
	// ID hashes in the number's place.
	CustomerKey       customerid.Key
	Service, Resource string
	Start             time.Time
}

// ErrNoCustomerKey is returned by ID for an intent without a valid
// customer key: the ID is never derived from the plain number again.
var ErrNoCustomerKey = errors.New("intent ID: no valid customer key (package customerid, " + customerid.Var + ")")

// keyedLabel separates keyed intent IDs from anything else the customer
// key might ever authenticate.
const keyedLabel = "bookonce intent v2\x00"

// ID is the intent's identity: HMAC-SHA256 keyed by the customer key over
// tenant, service, resource and slot (hex, first 24 chars). It names the
// appointment workflow, which calendars, Stripe metadata, logs and
// Temporal show next to the service and slot; keyed, the ID cannot be
// recomputed for guessed numbers without BOOKONCE_CUSTOMER_ID_KEY.
// Phrasing, channel and retries do not change it. A test pins the value:
// a change would orphan the bookings in flight.
func (c Canonical) ID() (string, error) {
	if !customerid.Valid(string(c.CustomerKey)) {
		return "", ErrNoCustomerKey
	}
	m := hmac.New(sha256.New, []byte(c.CustomerKey))
	m.Write([]byte(keyedLabel + strings.Join([]string{c.Tenant, c.Service, c.Resource, c.slot()}, "\x00")))
	return hex.EncodeToString(m.Sum(nil))[:24], nil
}

// LegacyID is the ID intents had before keyed IDs: SHA-256 of tenant,
// number, service, resource and slot, which anyone can recompute for
// guessed numbers. Only workflows recorded before the change and the
// dedup fallback for their bookings still use it; a test pins the value.
func (c Canonical) LegacyID() string {
	sum := sha256.Sum256([]byte(strings.Join([]string{c.Tenant, c.Customer, c.Service, c.Resource, c.slot()}, "\x00")))
	return hex.EncodeToString(sum[:])[:24]
}

// slot is the start as the IDs hash it: UTC, to the minute, RFC 3339.
func (c Canonical) slot() string {
	return c.Start.UTC().Truncate(time.Minute).Format(time.RFC3339)
}

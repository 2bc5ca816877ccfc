package intent

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Canonical is the intent that identifies a booking: tenant, customer
// (E.164), service, resource ("" if none), slot start in UTC truncated to
// the minute. Nothing about phrasing, language or channel belongs here, so
// that the same wish always has the same identity (principle 1).
type Canonical struct {
	Tenant, Customer, Service, Resource string
	Start                               time.Time
}

// ID hashes the canonical intent (hex SHA-256, first 24 chars); phrasing,
// channel and retries do not change it. It must stay byte-identical to
// workflows.IntentID (same field order, "\x00" separator, start as UTC
// truncated to the minute in RFC 3339): both name the same workflow. It is
// re-implemented rather than imported because workflows will import this
// package; a test pins the value.
func (c Canonical) ID() string {
	canonical := strings.Join([]string{c.Tenant, c.Customer, c.Service, c.Resource, c.Start.UTC().Truncate(time.Minute).Format(time.RFC3339)}, "\x00")
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(sum[:])[:24]
}

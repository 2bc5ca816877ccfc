package shopcal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/bookonce/bookonce/outcome"
)

// Event is a booking as it stands in the shop's calendar.
type Event struct {
	// ID is EventID of the booking: the same in every provider.
	ID string
	// Summary and Description are what staff read: the service, the
	// customer's masked number and a link to the booking on the ops page.
	Summary, Description string
	// Start and End are the slot.
	Start, End time.Time
}

// same reports whether two events say the same to the people reading
// the calendar (instants compared, not their zones).
func (e Event) same(o Event) bool {
	return e.ID == o.ID && e.Summary == o.Summary && e.Description == o.Description &&
		e.Start.Equal(o.Start) && e.End.Equal(o.End)
}

// Stored is an event as the provider holds it, with the version (CalDAV:
// its ETag) a change must name.
type Stored struct {
	Event
	Version string
	// Cancelled: deleted, yet the provider keeps the ID (Google): only an
	// update brings the event back.
	Cancelled bool
}

// EventID is the identity of a booking's event in the shop's calendar,
// derived from the tenant and the booking's reference: 40 lower-case
// letters and digits, which every provider accepts as an ID (Google's
// event IDs take base32hex, CalDAV a resource name).
func EventID(tenant, reference string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + reference))
	return "bookonce" + hex.EncodeToString(sum[:16])
}

// Provider is one resource's calendar at the shop's provider. Every
// method may be repeated after any failure.
type Provider interface {
	// Create stores ev under ev.ID unless an event with that ID exists;
	// created is false when it did (an earlier attempt landed).
	Create(ctx context.Context, ev Event) (created bool, err error)
	// Get reads the event with id; found is false when there is none.
	Get(ctx context.Context, id string) (s Stored, found bool, err error)
	// Update replaces the event stored at version with ev; ErrChanged
	// when it changed since, ErrGone when it no longer exists.
	Update(ctx context.Context, ev Event, version string) error
	// Delete removes the event with id stored at version; one already
	// gone is deleted. ErrChanged when it changed since.
	Delete(ctx context.Context, id, version string) error
	// Busy is what blocks the resource in [from, to) apart from
	// bookonce's own events: what staff entered, recurring events
	// expanded, all-day events as whole days in loc.
	Busy(ctx context.Context, from, to time.Time, loc *time.Location) ([]Interval, error)
}

// ErrChanged: the event changed since it was read (someone edited it in
// the calendar); read it again. ErrGone: it was deleted meanwhile.
var (
	ErrChanged = errors.New("shopcal: the event changed since it was read")
	ErrGone    = errors.New("shopcal: the event no longer exists")
)

// Error is a failed call to a provider, classified at this boundary: a
// refusal that no retry changes (the credentials, the calendar gone) is
// Final; anything else is retried under the same event ID, which is
// safe whatever the first attempt did.
type Error struct {
	Op      string
	Status  int // the provider's HTTP status; 0: no answer
	Outcome outcome.Outcome
	Err     error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("shop calendar: %s: %d (%s): %v", e.Op, e.Status, e.Outcome, e.Err)
	}
	return fmt.Sprintf("shop calendar: %s (%s): %v", e.Op, e.Outcome, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Class is the outcome the boundary decided (outcome.Classed).
func (e *Error) Class() outcome.Outcome { return e.Outcome }

// errNoTime: a provider's event without a start or an end.
var errNoTime = errors.New("shopcal: an event without a start or end")

package tenants

import (
	"errors"
	"fmt"
	"strings"
)

// Problem is one thing wrong with a tenants file, at a line and field.
type Problem struct {
	// File is the source's name, Line its 1-based line (0 when unknown,
	// e.g. for a File built in code).
	File string
	Line int
	// Path names the field: tenants[1].services[0].deposit.currency.
	Path    string
	Message string
}

func (p Problem) String() string {
	where := p.File
	if where == "" {
		where = "tenants"
	}
	if p.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, p.Line)
	}
	if p.Path == "" {
		return where + ": " + p.Message
	}
	return where + ": " + p.Path + ": " + p.Message
}

// ValidationError lists every problem of a rejected file, in file order.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// ErrRejected is matched by every error that rejects the file itself
// (invalid, or it would delete what bookings still need), as opposed to
// failures of the database.
var ErrRejected = errors.New("tenants file rejected")

// Is makes errors.Is(err, ErrRejected) true for a ValidationError.
func (e *ValidationError) Is(target error) bool { return target == ErrRejected }

// Booking is an active reservation that stands in the way of a removal.
type Booking struct {
	Tenant, ID, Reference, Resource, Service, Status string
	// Slot is its start in RFC 3339.
	Slot string
}

// BlockedError refuses an apply that would remove a tenant, resource or
// service that future bookings (held or confirmed) still use.
type BlockedError struct {
	// Removals name what the file would remove and bookings still use
	// ("resource demo/bay-2").
	Removals []string
	Bookings []Booking
}

func (e *BlockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "refused, nothing changed: the file removes %s, which future bookings still use:", strings.Join(e.Removals, ", "))
	for _, bk := range e.Bookings {
		fmt.Fprintf(&b, "\n  %s %s (%s) %s on %s at %s, reference %s", bk.Tenant, bk.ID, bk.Status, bk.Service, bk.Resource, bk.Slot, bk.Reference)
	}
	b.WriteString("\nkeep them in the file until these bookings are over or cancelled")
	return b.String()
}

// Is makes errors.Is(err, ErrRejected) true for a BlockedError.
func (e *BlockedError) Is(target error) bool { return target == ErrRejected }

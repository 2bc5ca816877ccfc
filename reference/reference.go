// Package reference says whose a business reference or workflow ID is.
//
// bookonce names its workflows and the references it writes to the
// calendar and payment APIs after the tenant: "appointment:<tenant>:…"
// (an appointment, also the calendar and payment reference of its
// booking), "customer:<tenant>:…" (a conversation), each optionally
// wrapped as "booking:…" (the lifecycle) or "payment:…" (the payment
// saga), and "<appointment>#move-<n>" (the calendar reference of a moved
// booking). Everything that turns an ID into a workflow, and the APIs
// that store references, ask this package whether it is the caller's: a
// tenant stores any reference it likes outside these namespaces (a front
// desk's own), but none inside another tenant's.
package reference

import (
	"fmt"
	"strings"
)

// MoveMark separates an appointment's workflow ID from the number of a
// move in the calendar reference of a moved booking
// ("appointment:demo:pi_1#move-1"): the calendar allows one active
// reservation per reference, so a move's new slot is held under a
// reference of its own while the old booking still holds the
// appointment's.
const MoveMark = "#move-"

// Namespaces of the workflows a tenant owns: the prefix, then the tenant.
const (
	AppointmentPrefix  = "appointment:"
	ConversationPrefix = "customer:"
)

// Prefixes of the workflows named after an appointment: its booking
// lifecycle and its payment saga.
const (
	BookingPrefix = "booking:"
	PaymentPrefix = "payment:"
)

// wrappers are the prefixes of workflows named after another one.
var wrappers = []string{BookingPrefix, PaymentPrefix}

// SagaOf is the workflow ID of the saga that owns the effects of a
// reference: the reference itself, or for a move's reference the
// appointment it moves (whose booking lifecycle placed it).
func SagaOf(ref string) string {
	if i := strings.Index(ref, MoveMark); i > 0 {
		return ref[:i]
	}
	return ref
}

// TenantOf is the tenant whose namespace id is in, and whether it is in
// one of bookonce's at all.
func TenantOf(id string) (string, bool) {
	id = unwrap(SagaOf(id))
	for _, ns := range []string{AppointmentPrefix, ConversationPrefix} {
		rest, ok := strings.CutPrefix(id, ns)
		if !ok {
			continue
		}
		tenant, tail, ok := strings.Cut(rest, ":")
		return tenant, ok && tenant != "" && tail != ""
	}
	return "", false
}

// Owned reports whether id (a workflow ID or a reference) is in tenant's
// namespace.
func Owned(tenant, id string) bool {
	t, ok := TenantOf(id)
	return ok && t == tenant
}

// IsAppointmentOf reports whether id is one of tenant's appointment
// workflow IDs (not a wrapper, not a move's reference).
func IsAppointmentOf(tenant, id string) bool {
	return strings.HasPrefix(id, AppointmentPrefix) && !strings.Contains(id, MoveMark) && Owned(tenant, id)
}

// Reserved reports whether ref uses one of bookonce's namespaces, well
// formed or not.
func Reserved(ref string) bool {
	ref = unwrap(ref)
	return strings.HasPrefix(ref, AppointmentPrefix) || strings.HasPrefix(ref, ConversationPrefix)
}

// CheckStored is the APIs' rule for a reference a tenant stores: free
// outside bookonce's namespaces, inside them only the tenant's own.
func CheckStored(tenant, ref string) error {
	if Reserved(ref) && !Owned(tenant, ref) {
		return fmt.Errorf("reference %q is in a namespace bookonce reserves (%s<tenant>:…) and not in this tenant's (%s%s:…)", ref, AppointmentPrefix, AppointmentPrefix, tenant)
	}
	return nil
}

func unwrap(id string) string {
	for {
		inner := id
		for _, w := range wrappers {
			inner = strings.TrimPrefix(inner, w)
		}
		if inner == id {
			return id
		}
		id = inner
	}
}

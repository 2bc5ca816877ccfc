// Package shopcal writes bookings into the shop's own calendar, where its
// staff work (CalDAV today; Google Calendar and Microsoft 365 next), each
// booking exactly once, although none of these calendars takes an
// idempotency key.
//
// The guard is the event's identity: EventID derives it from the tenant
// and the booking, the same in every provider, and every write names it.
// A create asks the provider to store the event only if that ID is absent
// (CalDAV: PUT with If-None-Match: *, answered 412 when it exists), so a
// retried create after a lost answer, a worker killed after the
// provider's commit, a reset or a replay finds the event the first
// attempt made instead of making a second one; a move and a cancel change
// or remove the event by the version they read (If-Match), so an edit
// staff made meanwhile is read again, never overwritten blind. Put and
// Remove are those steps, safe to repeat after any failure.
package shopcal

package calendar

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/bookonce/bookonce/internal/web"
)

// constraintCustomerDoubleBooking is the exclusion constraint (migration
// 00008) that refuses a second active reservation of one customer for one
// service at an overlapping time, whatever the reference.
const constraintCustomerDoubleBooking = "calendar_customer_no_double_booking"

// defaultRegion reads numbers without a country code, as the gateway does.
const defaultRegion = "DE"

// normaliseCustomer makes one customer one string, whoever typed it: the
// front desk's "0151 1234 5678", the agent's "+4915112345678" and
// Twilio's "whatsapp:+4915112345678" are the same person, and the
// double-booking constraint compares this string. A phone number becomes
// E.164 (without asking the library whether the range is valid: its
// metadata lags new ranges, and Twilio already sends E.164); anything else
// (a name, a customer number) is kept, trimmed, with its spaces collapsed.
func normaliseCustomer(raw, region string) string {
	s := strings.Join(strings.Fields(raw), " ")
	for _, prefix := range []string{"whatsapp:", "tel:"} {
		if len(s) > len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
			s = strings.TrimSpace(s[len(prefix):])
		}
	}
	if region == "" {
		region = defaultRegion
	}
	if !looksLikePhone(s) {
		return s
	}
	num, err := phonenumbers.Parse(s, region)
	if err != nil || num.GetCountryCode() == 0 || num.GetNationalNumber() == 0 {
		return s
	}
	return phonenumbers.Format(num, phonenumbers.E164)
}

// looksLikePhone accepts digits with the usual separators and an optional
// leading plus, so that "Kunde 4711" is not read as a number.
func looksLikePhone(s string) bool {
	digits := 0
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' && i == 0, r == ' ', r == '-', r == '/', r == '(', r == ')', r == '.':
		default:
			return false
		}
	}
	return digits >= 5
}

// lockCustomer serialises the hold requests of one customer until the
// transaction ends. It decides nothing (the constraint does); it only
// orders them: without it, two concurrent holds of one customer on two
// free resources each wait for the other's uncommitted row in the
// exclusion index, a deadlock PostgreSQL breaks by failing one with 500.
func lockCustomer(ctx context.Context, q querier, tenant, customer string) error {
	if _, err := q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('calendar-customer/' || $1 || '/' || $2))`, tenant, customer); err != nil {
		return fmt.Errorf("lock customer: %w", err)
	}
	return nil
}

// activeOfCustomer finds the customer's active reservation of service that
// overlaps [start, end) and is not a deliberate second one: the
// reservation the constraint protects. It names the existing booking in the
// refusal; it decides nothing (the constraint does).
func activeOfCustomer(ctx context.Context, q querier, tenant, customer, service string, start, end time.Time) (Hold, error) {
	return scanReservation(q.QueryRow(ctx, `SELECT `+reservationColumns+` FROM calendar_reservations
		WHERE tenant_id = $1 AND customer = $2 AND service = $3 AND slot && $4
		  AND status IN ('held', 'confirmed') AND NOT deliberate_second
		ORDER BY created_at, id LIMIT 1`, tenant, customer, service, slotRange(start, end)))
}

// alreadyBooked is the refusal of a second reservation of one customer for
// one service at an overlapping time. It names the existing reservation
// (its hold, booking and reference) so the caller can link it.
func alreadyBooked(existing Hold) *web.Problem {
	what := "hold " + existing.ID
	if existing.BookingID != "" {
		what = "booking " + existing.BookingID
	}
	p := web.NewProblem(http.StatusConflict, CodeCustomerAlreadyBooked,
		"the customer already has "+what+" for "+existing.Service+" at "+existing.Start.Format("2006-01-02T15:04Z07:00")+
			" (reference "+quote(existing.Reference)+"); send deliberate_second: true to book a second one")
	p.Extra = map[string]any{"existing": existing}
	return p
}

// refuseDoubleBooking answers the refusal when the customer holds an
// overlapping reservation of the service (not a deliberate second one),
// and reports whether it answered (a failed lookup answers 500). The
// constraint already refused the insert; this only names what it protects.
func (s *Server) refuseDoubleBooking(w http.ResponseWriter, r *http.Request, q querier, tenant string, h Hold) bool {
	existing, err := activeOfCustomer(r.Context(), q, tenant, h.Customer, h.Service, h.Start, h.End)
	switch {
	case errors.Is(err, errNotFound):
		return false
	case err != nil:
		s.internalError(w, r, "look up the existing reservation", err)
		return true
	}
	final(r.Context(), w, alreadyBooked(existing))
	return true
}

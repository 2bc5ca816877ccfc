package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// The page's bookings: the tenant's running BookingWorkflows (Temporal
// visibility), each with what staff may do now. A Cancel button says
// beforehand whether the deposit would be refunded or kept (the booking's
// own cancel_policy); a No-show button appears once the slot has begun.
// Both post the same Updates as the API, under an Update ID derived from a
// token rendered into the form, so a double click or a resubmitted form
// acts once (docs/lifecycle.md, "From the ops page").

// Routes of the booking buttons; {id} is the appointment's workflow ID.
const (
	RouteBookingCancel = "/ops/bookings/{id}/cancel"
	RouteBookingNoShow = "/ops/bookings/{id}/no-show"
)

// BookingLimit is how many bookings the page lists.
const BookingLimit = 100

// policyBudget bounds the time the page spends asking the bookings for
// their refund policy; a booking not asked in time shows "unknown".
const policyBudget = 3 * time.Second

// bookingsData is the page's bookings section.
type bookingsData struct {
	Bookings []bookingView
	// BookingsShown: Temporal is set; BookingsError: it did not answer.
	BookingsShown bool
	BookingsError string
}

// bookingView is one booking row.
type bookingView struct {
	ID, Customer, Service, Status string
	SlotStart                     time.Time
	// Policy says what a cancel now would do with the deposit.
	Policy string
	// CancelAction and NoShowAction are the forms' targets; empty: no
	// such button. Token is the form's idempotency token.
	CancelAction, CancelLabel, NoShowAction, Token string
	Link                                           string
}

// loadBookings lists the tenant's running bookings, soonest slot first.
func (p *Page) loadBookings(ctx context.Context, d *pageData, tenant string, now time.Time) error {
	if p.Temporal == nil {
		return nil
	}
	d.BookingsShown = true
	prefix := lifecycle.WorkflowID(appointment.WorkflowID(tenant, ""))
	if strings.ContainsAny(prefix, `'"\`) {
		return fmt.Errorf("list bookings: tenant %q cannot be quoted in a visibility query", tenant)
	}
	lctx, lcancel := context.WithTimeout(ctx, policyBudget)
	defer lcancel()
	res, err := p.Temporal.ListWorkflow(lctx, &workflowservice.ListWorkflowExecutionsRequest{
		PageSize: BookingLimit,
		Query:    fmt.Sprintf(`WorkflowType = '%s' AND ExecutionStatus = 'Running' AND WorkflowId STARTS_WITH '%s'`, lifecycle.WorkflowName, prefix),
	})
	if err != nil {
		return fmt.Errorf("list bookings: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, policyBudget)
	defer cancel()
	for _, e := range res.GetExecutions() {
		wid := e.GetExecution().GetWorkflowId()
		if !strings.HasPrefix(wid, prefix) { // only the tenant's own
			continue
		}
		sa := e.GetSearchAttributes().GetIndexedFields()
		v := bookingView{
			ID: strings.TrimPrefix(wid, "booking:"), Customer: customerOf(sa),
			Service: attr[string](sa, workflows.ServiceKey.GetName()), Status: attr[string](sa, workflows.BookingStatusKey.GetName()),
			SlotStart: attr[time.Time](sa, workflows.SlotStartKey.GetName()),
		}
		p.actions(pctx, &v, now)
		v.Link = p.linkFor(wid, "")
		v.ID = mask.Phones(v.ID)
		d.Bookings = append(d.Bookings, v)
	}
	slices.SortStableFunc(d.Bookings, func(x, y bookingView) int { return x.SlotStart.Compare(y.SlotStart) })
	return nil
}

// actions decides the row's buttons and, for a cancel, the refund policy.
func (p *Page) actions(ctx context.Context, v *bookingView, now time.Time) {
	if mask.Phones(v.ID) != v.ID {
		// The page never puts a phone number into its HTML, so a booking
		// whose ID carries one is changed through the API.
		v.Policy = "use the API: the ID contains a phone number"
		return
	}
	begun := !now.Before(v.SlotStart)
	status := workflows.BookingStatus(v.Status)
	path := "/ops/bookings/" + url.PathEscape(v.ID)
	if status == workflows.StatusConfirmed && !begun {
		v.CancelAction, v.CancelLabel, v.Policy = path+"/cancel", "Cancel", "refund policy unknown: the booking did not answer"
		if pol, err := lifecycle.PolicyOf(ctx, p.Temporal, v.ID); err != nil {
			p.log().Warn("ops: cancel policy", "workflow_id", v.ID, "err", err)
		} else {
			v.Policy, v.CancelLabel = describePolicy(pol, now)
		}
	}
	if begun && (status == workflows.StatusConfirmed || status == workflows.StatusCompleted) {
		v.NoShowAction = path + "/no-show"
	}
	if v.CancelAction != "" || v.NoShowAction != "" {
		v.Token = formToken()
	}
}

// describePolicy says what a cancel at now would do with the deposit,
// and labels the button with it.
func describePolicy(pol lifecycle.CancelPolicy, now time.Time) (policy, label string) {
	until := pol.FreeUntil.UTC().Format("2006-01-02 15:04") + " UTC"
	amount := fmt.Sprintf("%d.%02d %s", pol.Deposit/100, pol.Deposit%100, strings.ToUpper(pol.Currency))
	switch {
	case pol.Deposit <= 0:
		return "no deposit: nothing to refund", "Cancel"
	case pol.RefundsAt(now):
		return fmt.Sprintf("deposit %s refunded in full: free cancellation until %s (%s before the slot)", amount, until, pol.Window), "Cancel and refund " + amount
	default:
		return fmt.Sprintf("deposit %s kept: free cancellation ended %s (%s before the slot)", amount, until, pol.Window), "Cancel, keep " + amount
	}
}

// formToken is a form's idempotency token: random, so each rendered form
// is its own request, and the same in every submission of that form.
func formToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// attr decodes a search attribute; missing or malformed: the zero value.
func attr[T any](sa map[string]*commonpb.Payload, name string) T {
	var v T
	if p, ok := sa[name]; ok {
		if err := converter.GetDefaultDataConverter().FromPayload(p, &v); err != nil {
			var zero T
			return zero
		}
	}
	return v
}

// customerOf is the masked number a booking's search attributes show:
// CustomerMasked, or for a booking started before customer keys its
// CustomerPhone, masked here (the page never shows a number).
func customerOf(sa map[string]*commonpb.Payload) string {
	if m := attr[string](sa, workflows.CustomerMaskedKey.GetName()); m != "" {
		return mask.Phones(m)
	}
	return mask.Phones(attr[string](sa, workflows.CustomerPhoneKey.GetName()))
}

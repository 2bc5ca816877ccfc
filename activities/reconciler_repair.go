package activities

import (
	"context"

	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/review"
)

// RepairInput is one orphan to repair.
type RepairInput struct {
	Tenant string    `json:"tenant"`
	Shape  SagaShape `json:"shape"`
	Orphan Orphan    `json:"orphan"`
}

// RepairResult says what the repair did.
type RepairResult struct {
	Step Step `json:"step"`
	// Repaired is false when the repair found nothing to do any more (the
	// saga runs again, or the effect belongs to another reference).
	Repaired bool   `json:"repaired"`
	Why      string `json:"why,omitempty"`
}

// RepairOrphan undoes one orphaned effect with the key of this activity
// execution (KeyOf): a retried attempt replays the downstream's first
// answer, and a later sweep (another run, another key) finds the effect
// already undone and does not list it again. It first asks Temporal once
// more whether the saga is running: a new run of the same workflow ID owns
// its reference's effects again.
func (r *Reconciler) RepairOrphan(ctx context.Context, in RepairInput) (RepairResult, error) {
	st, err := r.sagaState(ctx, in.Shape, in.Orphan.Reference)
	if err != nil {
		return RepairResult{}, err
	}
	if st.running || st.confirmed {
		return RepairResult{Why: "the saga runs again or confirmed"}, nil
	}
	cal, g, err := r.clients(in.Tenant)
	if err != nil {
		return RepairResult{}, err
	}
	o := in.Orphan
	var res RepairResult
	switch o.Kind {
	case RepairReleaseHold:
		res, err = releaseOrphanHold(ctx, cal, o)
	case RepairCancelBooking:
		res, err = cancelOrphanBooking(ctx, cal, o)
	case RepairVoidAuthorisation:
		res, err = voidOrphanAuthorisation(ctx, g, o)
	case RepairRefundDeposit:
		res, err = refundOrphanDeposit(ctx, g, o)
	case RepairReview:
		res, err = r.openOrphanReview(ctx, in.Tenant, o)
	default:
		return RepairResult{}, temporal.NewNonRetryableApplicationError("unknown repair kind "+o.Kind, ErrTypeNotRepairable, nil)
	}
	if err != nil {
		return RepairResult{}, err
	}
	if res.Repaired {
		reconcilerRepairs.WithLabelValues(o.Kind).Inc()
	}
	return res, nil
}

func releaseOrphanHold(ctx context.Context, cal *calendar.Client, o Orphan) (RepairResult, error) {
	h, err := cal.GetHold(ctx, o.ObjectID)
	if err != nil {
		return RepairResult{}, calendarError("read hold", err)
	}
	if reference.SagaOf(h.Reference) != reference.SagaOf(o.Reference) || h.Status != calendar.HoldHeld {
		return RepairResult{Why: "hold is " + string(h.Status) + " under " + h.Reference}, nil
	}
	key := KeyOf(ctx)
	h, err = cal.ReleaseHold(ctx, key, o.ObjectID)
	if err != nil {
		return RepairResult{}, calendarError("release hold", err)
	}
	return RepairResult{Step: stepOf(ctx, key, h.ID), Repaired: true}, nil
}

func cancelOrphanBooking(ctx context.Context, cal *calendar.Client, o Orphan) (RepairResult, error) {
	b, err := cal.GetBooking(ctx, o.ObjectID)
	if err != nil {
		return RepairResult{}, calendarError("read booking", err)
	}
	if reference.SagaOf(b.Reference) != reference.SagaOf(o.Reference) || b.Status != calendar.BookingConfirmed {
		return RepairResult{Why: "booking is " + string(b.Status) + " under " + b.Reference}, nil
	}
	key := KeyOf(ctx)
	b, err = cal.CancelBooking(ctx, key, o.ObjectID)
	if err != nil {
		return RepairResult{}, calendarError("cancel booking", err)
	}
	return RepairResult{Step: stepOf(ctx, key, b.ID), Repaired: true}, nil
}

// voidOrphanAuthorisation voids the listed authorisation; voiding a
// voided one succeeds. One captured meanwhile is neither voided nor
// refunded: nothing here moves money the saga did not decide to give back.
func voidOrphanAuthorisation(ctx context.Context, g payments.Gateway, o Orphan) (RepairResult, error) {
	key := KeyOf(ctx)
	pi, err := g.Void(ctx, key, o.ObjectID)
	if payments.CodeOf(err) == payments.CodeUnexpectedState {
		return RepairResult{Why: "the authorisation is no longer voidable: " + err.Error()}, nil
	}
	if err != nil {
		return RepairResult{}, paymentError("void authorisation", err)
	}
	return RepairResult{Step: stepOf(ctx, key, pi.ID), Repaired: true}, nil
}

func (r *Reconciler) openOrphanReview(ctx context.Context, tenant string, o Orphan) (RepairResult, error) {
	key := KeyOf(ctx)
	c, err := r.Reviews.Open(ctx, key, review.Case{
		Tenant: tenant, WorkflowID: o.Reference, Reason: review.ReasonOrphanedEffect, Details: orphanDetails(o),
	})
	if err != nil {
		return RepairResult{}, err
	}
	return RepairResult{Step: stepOf(ctx, key, c.ID), Repaired: true}, nil
}

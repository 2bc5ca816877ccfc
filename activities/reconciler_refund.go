package activities

import (
	"context"

	"github.com/bookonce/bookonce/payments"
)

// capturedOrphans decides about the captured deposits of one orphaned
// reference: money taken for a booking that does not exist. A saga that
// closed without a booking and without asking a person left it behind (a
// compensation that missed the intent behind a lagging search, a capture
// that raced a cancel): it is refunded in full. With a booking standing,
// decide's rule about bookings applies; a missing saga's deposit goes to a
// person (why), as does nothing of a saga a person already settles.
func capturedOrphans(shape SagaShape, ref string, st sagaState, s *suspects) (out []Orphan, why string) {
	if len(s.captured) == 0 || len(s.bookings) > 0 {
		return nil, ""
	}
	switch {
	case st.missing:
		return nil, "captured deposit of a saga that no longer exists, without a booking"
	case shape.NeedsReview != "" && st.booking == shape.NeedsReview:
		return nil, "" // its own case names it
	}
	for _, pi := range s.captured {
		out = append(out, Orphan{Reference: ref, Kind: RepairRefundDeposit, ObjectID: pi.ID,
			Why: "captured deposit without a booking of a saga that " + st.String()})
	}
	return out, ""
}

// refundOrphanDeposit refunds what is left of the captured deposit. The
// payment API refuses to refund more than was captured, so a later sweep
// (another key) that meets it again changes nothing.
func refundOrphanDeposit(ctx context.Context, g payments.Gateway, o Orphan) (RepairResult, error) {
	key := KeyOf(ctx)
	r, err := g.Refund(ctx, key, o.ObjectID, 0)
	if payments.CodeOf(err) == payments.CodeChargeAlreadyRefunded {
		return RepairResult{Why: "the deposit was refunded already"}, nil
	}
	if err != nil {
		return RepairResult{}, paymentError("refund deposit", err)
	}
	return RepairResult{Step: stepOf(ctx, key, r.ID), Repaired: true}, nil
}

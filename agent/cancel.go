package agent

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// cancelWait bounds how long cancel_booking waits for the lifecycle's
// answer before it answers pending (the cancel goes on).
const cancelWait = 8 * time.Second

// CancelBooking cancels a confirmed booking through its lifecycle's cancel
// Update. The Update ID is the business intent itself, "cancel this
// booking", not the call: a retried, duplicated or parallel call, or a
// second agent, gets the first answer, and the booking is cancelled, its
// deposit refunded (or kept, by the tenant's cancellation window) and the
// customer told exactly once.
func (s *Service) CancelBooking(ctx context.Context, c Caller, in ChangeInput) (ChangeOutput, error) {
	p, err := s.profile(c)
	if err != nil {
		return ChangeOutput{}, err
	}
	a, err := s.resolve(ctx, c, p, in.ID)
	if err != nil {
		return ChangeOutput{}, err
	}
	out := ChangeOutput{WorkflowID: a.WorkflowID}
	// Detached from the caller: an agent that gives up mid-call leaves a
	// cancel that completes; its retry attaches to the same Update.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
	defer cancel()
	st, err := lifecycle.Cancel(wctx, s.Temporal, a.WorkflowID, lifecycle.CancelUpdateID(c.Tenant, "agent-cancel:"+a.WorkflowID), lifecycle.CancelRequest{Reason: in.Reason})
	var appErr *temporal.ApplicationError
	var notFound *serviceerror.NotFound
	switch {
	case err == nil:
		return cancelled(out, st), nil
	case errors.As(err, &appErr) && (appErr.Type() == lifecycle.ErrTypeNotCancellable || appErr.Type() == lifecycle.ErrTypeInvalidCancel):
		out.Status, out.Message = StatusNotChanged, "Not cancelled: "+appErr.Message()
	case errors.As(err, &notFound):
		out.Status, out.Message = StatusNotChanged, "Not cancelled: this booking is not confirmed yet, or its appointment is over. Call get_booking for its state."
	default:
		// Unknown: the cancel may be under way. The same call again acts once.
		s.Logger.Warn("agent cancel outcome unknown", "workflow_id", a.WorkflowID, "error", err)
		out.Status, out.Message = StatusPending, "The cancellation is under way or its outcome is unknown. Call cancel_booking again with the same id: it cancels once."
	}
	return out, nil
}

// cancelled words a cancelled booking's answer. The customer's message is
// claimed only when the lifecycle reserved it (MessageID); a message step
// that ended "not sent" leaves the telling to the agent.
func cancelled(out ChangeOutput, st lifecycle.State) ChangeOutput {
	out.Deposit = string(st.Deposit)
	if st.Status != workflows.StatusCancelled {
		out.Status, out.Message = StatusPending, "The cancellation needs a person ("+st.Reason+"); the business will get back to the customer. Do not cancel again."
		return out
	}
	told := "the customer was sent a message."
	if st.MessageID == "" {
		told = "no message could be sent to the customer: tell them yourself."
	}
	out.Status, out.Message = StatusCancelled, "Cancelled; "+told
	switch st.Deposit {
	case lifecycle.DepositRefunded:
		out.Message = "Cancelled; the deposit is refunded in full and " + told
	case lifecycle.DepositKept:
		out.Message = "Cancelled; the deposit is kept (" + st.Reason + ") and " + told
	}
	return out
}

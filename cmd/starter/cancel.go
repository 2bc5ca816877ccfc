package main

import (
	"fmt"
	"io"

	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// cancelCmd cancels a confirmed booking through the gateway's API (the
// booking's cancel Update). The Idempotency-Key defaults to one derived
// from the workflow ID, so running the command again returns the first
// answer instead of acting twice.
func cancelCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("cancel", "[--reason TEXT] [--idempotency-key KEY] <workflow-id>")
	reason := fs.String("reason", "cancelled with starter", "why the booking is cancelled (kept in its history)")
	key := fs.String("idempotency-key", "", "the request's Idempotency-Key (default: derived from the workflow ID)")
	if err := parse(fs, args, stdout, appointmentArg); err != nil {
		return err
	}
	id := fs.Arg(0)
	st, err := postChange(id, "cancel", *key, lifecycle.CancelRequest{Reason: *reason})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "booking   %s\nstatus    %s\n", id, st.Status)
	if st.Deposit != "" {
		fmt.Fprintf(stdout, "deposit   %s %s\n", st.Deposit, st.RefundID)
	}
	if st.ReviewCase != "" {
		fmt.Fprintf(stdout, "review    %s (open)\n", st.ReviewCase)
	}
	fmt.Fprintf(stdout, "reason    %s\n", st.Reason)
	if st.Status != workflows.StatusCancelled {
		return reported(exitFailed)
	}
	return nil
}

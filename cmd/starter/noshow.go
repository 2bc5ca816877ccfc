package main

import (
	"fmt"
	"io"

	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// noShowCmd marks a booking whose slot has begun as a no-show through the
// gateway's API (the booking's no_show Update); the deposit is kept. The
// Idempotency-Key defaults to one derived from the workflow ID, so running
// the command again returns the first answer.
func noShowCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("no-show", "[--note TEXT] [--idempotency-key KEY] <workflow-id>")
	note := fs.String("note", "", "a note for the booking's history (e.g. who noticed)")
	key := fs.String("idempotency-key", "", "the request's Idempotency-Key (default: derived from the workflow ID)")
	if err := parse(fs, args, stdout, appointmentArg); err != nil {
		return err
	}
	id := fs.Arg(0)
	st, err := postChange(id, "no-show", *key, lifecycle.NoShowRequest{Note: *note})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "booking   %s\nstatus    %s\ndeposit   %s\nreason    %s\n", id, st.Status, st.Deposit, st.Reason)
	if st.Status != workflows.StatusNoShow {
		return reported(exitFailed)
	}
	return nil
}

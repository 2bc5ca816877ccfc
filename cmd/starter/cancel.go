package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/bookonce/bookonce/workflows"
)

// cancelCmd cancels a confirmed booking through the gateway's API (the
// booking's cancel Update). The Idempotency-Key defaults to one derived
// from the workflow ID, so running the command again returns the first
// answer instead of acting twice.
func cancelCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("cancel", "[--reason TEXT] [--idempotency-key KEY] <workflow-id>")
	reason := fs.String("reason", "cancelled with starter", "why the booking is cancelled (kept in its history)")
	key := fs.String("idempotency-key", "", "the request's Idempotency-Key (default: derived from the workflow ID)")
	if err := parse(fs, args, stdout, func(rest []string) error {
		switch {
		case len(rest) != 1:
			return errors.New("want exactly one workflow ID, e.g. appointment:demo:<intent-id>")
		case !strings.HasPrefix(rest[0], "appointment:"):
			return fmt.Errorf("%q is not an appointment's workflow ID (appointment:<tenant>:<intent-id>; `starter book` prints it)", rest[0])
		}
		return nil
	}); err != nil {
		return err
	}
	id := fs.Arg(0)
	if *key == "" {
		*key = "starter-cancel:" + id
	}
	g, err := dialGateway()
	if err != nil {
		return err
	}
	data, err := g.doWith(http.MethodPost, "/v1/appointments/"+url.PathEscape(id)+"/cancel",
		workflows.CancelRequest{Reason: *reason}, http.Header{"Idempotency-Key": {*key}})
	if err != nil {
		return err
	}
	var st workflows.LifecycleState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("decode the gateway's answer: %w", err)
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

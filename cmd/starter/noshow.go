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

// noShowCmd marks a booking whose slot has begun as a no-show through the
// gateway's API (the booking's no_show Update); the deposit is kept. The
// Idempotency-Key defaults to one derived from the workflow ID, so running
// the command again returns the first answer.
func noShowCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("no-show", "[--note TEXT] [--idempotency-key KEY] <workflow-id>")
	note := fs.String("note", "", "a note for the booking's history (e.g. who noticed)")
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
		*key = "starter-no-show:" + id
	}
	g, err := dialGateway()
	if err != nil {
		return err
	}
	data, err := g.doWith(http.MethodPost, "/v1/appointments/"+url.PathEscape(id)+"/no-show",
		workflows.NoShowRequest{Note: *note}, http.Header{"Idempotency-Key": {*key}})
	if err != nil {
		return err
	}
	var st workflows.LifecycleState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("decode the gateway's answer: %w", err)
	}
	fmt.Fprintf(stdout, "booking   %s\nstatus    %s\ndeposit   %s\nreason    %s\n", id, st.Status, st.Deposit, st.Reason)
	if st.Status != workflows.StatusNoShow {
		return reported(exitFailed)
	}
	return nil
}

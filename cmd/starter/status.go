package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// status prints a booking's state and saga step table.
func status(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", "<workflow-id>")
	if err := parse(fs, args, stdout, func(rest []string) error {
		if len(rest) != 1 {
			return errors.New("want exactly one workflow ID, e.g. appointment:demo:<intent-id>")
		}
		return nil
	}); err != nil {
		return err
	}
	id := fs.Arg(0)
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	ctx, stop := stack.SignalContext()
	defer stop()
	tc, err := dialTemporal(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer tc.Close()
	st, err := appointment.StatusOf(ctx, tc, id)
	if err != nil {
		return err
	}
	return printState(stdout, id, st)
}

// printState prints the booking and its saga steps with keys and
// downstream IDs, the evidence that each effect happened once.
func printState(w io.Writer, id string, st appointment.State) error {
	fmt.Fprintf(w, "booking   %s\nstatus    %s\n", id, st.Status)
	if st.HoldID != "" {
		fmt.Fprintf(w, "hold      %s\n", st.HoldID)
	}
	if st.BookingID != "" {
		fmt.Fprintf(w, "booked    %s\n", st.BookingID)
	}
	if st.Payment != "" {
		fmt.Fprintf(w, "deposit   %s %s\n", st.Payment, st.IntentID)
	}
	if st.PaymentURL != "" {
		fmt.Fprintf(w, "pay at    %s\n", st.PaymentURL)
	}
	if !st.PaymentExpiresAt.IsZero() {
		fmt.Fprintf(w, "pay until %s\n", st.PaymentExpiresAt.Format(time.RFC3339))
	}
	if st.MessageID != "" {
		fmt.Fprintf(w, "message   %s\n", st.MessageID)
	}
	if st.ReviewCase != "" {
		fmt.Fprintf(w, "review    %s (open)\n", st.ReviewCase)
	}
	if st.Lifecycle != "" {
		fmt.Fprintf(w, "lifecycle %s (cancel: starter cancel %s)\n", st.Lifecycle, id)
	}
	if st.Reason != "" {
		fmt.Fprintf(w, "reason    %s\n", st.Reason)
	}
	for _, alt := range st.Alternatives {
		fmt.Fprintf(w, "free      %s\n", alt.Format(time.RFC3339))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSTEP\tACTIVITY\tATTEMPT\tIDEMPOTENCY KEY\tDOWNSTREAM ID\tRESULT")
	for _, s := range st.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", s.Name, s.ActivityID, s.Attempt, s.Key, s.DownstreamID, s.Result)
	}
	return tw.Flush()
}

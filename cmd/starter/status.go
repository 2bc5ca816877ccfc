package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/workflows"
)

func status(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: starter status <workflow-id>")
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	ctx, stop := stack.SignalContext()
	defer stop()
	tc, err := stack.Dial(ctx, cfg, stack.Logger(cfg, os.Stderr))
	if err != nil {
		return err
	}
	defer tc.Close()
	st, err := workflows.AppointmentStatus(ctx, tc, args[0])
	if err != nil {
		return err
	}
	printState(os.Stdout, args[0], st)
	return nil
}

// printState prints the booking and its saga steps with keys and
// downstream IDs, the evidence that each effect happened once.
func printState(w io.Writer, id string, st workflows.BookingState) {
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
	if st.MessageID != "" {
		fmt.Fprintf(w, "message   %s\n", st.MessageID)
	}
	if st.ReviewCase != "" {
		fmt.Fprintf(w, "review    %s (open)\n", st.ReviewCase)
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
	_ = tw.Flush()
}

func sortStrings(s []string) []string {
	sort.Strings(s)
	return s
}

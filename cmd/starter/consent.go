package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/bookonce/bookonce/consent"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/stack"
)

// consentCmd prints a customer's consent trail: every STOP and START
// with the message that made it, and what holds now. It is what a shop
// shows when asked why a customer got, or did not get, a reminder.
func consentCmd(args []string, stdout, stderr io.Writer) error {
	tenant, number, err := parseCustomer("consent", args, stdout)
	if err != nil {
		return err
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	ctx, stop := stack.SignalContext()
	defer stop()
	pool, closeDB, err := stack.Database(ctx, cfg, stack.Logger(cfg, stderr))
	if err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	defer closeDB()
	return printConsent(ctx, stack.ConsentStore(cfg, pool), tenant, number, stdout)
}

// printConsent writes the trail of number at tenant, oldest first, and
// the state it leaves.
func printConsent(ctx context.Context, store *consent.Store, tenant, number string, stdout io.Writer) error {
	trail, err := store.Trail(ctx, tenant, number)
	if err != nil {
		return err
	}
	state := "subscribed: reminders are sent (no STOP on record)"
	if n := len(trail); n > 0 {
		state = "subscribed: reminders are sent"
		if last := trail[n-1]; last.Action == consent.OptOut {
			state = "opted out: no reminders since " + last.At.UTC().Format(time.RFC3339)
		}
	}
	fmt.Fprintf(stdout, "customer %s at %s: %s\n", mask.Phones(number), tenant, state)
	if len(trail) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "AT\tACTION\tCHANNEL\tMESSAGE")
	for _, c := range trail {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.At.UTC().Format(time.RFC3339), c.Action, c.Channel, c.EventID)
	}
	return w.Flush()
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nyaruka/phonenumbers"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/cmd/internal/nextslot"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// bookFlags are the flags of "starter book".
type bookFlags struct {
	tenant, customer, service, resource, start, channel, currency, method string
	deposit                                                               int64
	wait                                                                  bool
}

// notConfirmedError: the booking ended, but not Confirmed. Scripts see it
// as exit status 1.
type notConfirmedError struct {
	id     string
	status workflows.BookingStatus
	reason string
}

func (e *notConfirmedError) Error() string {
	if e.reason == "" {
		return fmt.Sprintf("booking %s ended %s", e.id, e.status)
	}
	return fmt.Sprintf("booking %s ended %s: %s", e.id, e.status, e.reason)
}

func bookFlagSet(f *bookFlags) *flagSet {
	fs := newFlags("book", "--customer <E.164> --service <service> --start <RFC 3339 | next> [flags]")
	fs.StringVar(&f.tenant, "tenant", config.DefaultTenant, "tenant")
	fs.StringVar(&f.customer, "customer", "", "customer phone number, E.164 (e.g. +4915112345678)")
	fs.StringVar(&f.service, "service", "", "service, e.g. tire-change or inspection")
	fs.StringVar(&f.resource, "resource", "", "resource (bay or technician); empty picks a free one")
	fs.StringVar(&f.start, "start", "", `slot start, RFC 3339 with zone (e.g. 2026-12-01T14:00:00+01:00), or "next": the next free slot`)
	fs.StringVar(&f.channel, "channel", string(workflows.ChannelAPI), "channel: api, voice or whatsapp")
	fs.Int64Var(&f.deposit, "deposit", 2000, "deposit in minor units (2000 = 20.00)")
	fs.StringVar(&f.currency, "currency", "eur", "deposit currency")
	fs.StringVar(&f.method, "payment-method", "pm_card_visa", "card for the deposit (test cards: pm_card_visa, pm_card_chargeDeclined)")
	fs.BoolVar(&f.wait, "wait", true, "wait for the booking's outcome (exit status 1 unless it ends Confirmed)")
	return fs
}

// parseBook parses and checks the command line; every problem with it is
// a usage error.
func parseBook(args []string, stdout io.Writer) (bookFlags, appointment.Request, error) {
	var f bookFlags
	fs := bookFlagSet(&f)
	if err := parse(fs, args, stdout, nil); err != nil {
		return f, appointment.Request{}, err
	}
	var missing []string
	for _, m := range []struct{ name, value string }{{"--customer", f.customer}, {"--service", f.service}, {"--start", f.start}} {
		if m.value == "" {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return f, appointment.Request{}, usageFailure(fs, fmt.Errorf("missing %s", strings.Join(missing, ", ")))
	}
	req, err := f.request()
	if err != nil {
		return f, req, usageFailure(fs, err)
	}
	return f, req, nil
}

// request builds the booking; a --start of "next" leaves SlotStart zero.
func (f bookFlags) request() (appointment.Request, error) {
	num, err := phonenumbers.Parse(f.customer, "DE")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return appointment.Request{}, fmt.Errorf("--customer %q is not a valid phone number; use E.164 such as +4915112345678", f.customer)
	}
	var start time.Time
	if f.start != nextslot.StartNext {
		if start, err = time.Parse(time.RFC3339, f.start); err != nil {
			return appointment.Request{}, fmt.Errorf(`--start %q: use RFC 3339 with a zone, e.g. 2026-12-01T14:00:00+01:00, or "next"`, f.start)
		}
	}
	switch workflows.Channel(f.channel) {
	case workflows.ChannelAPI, workflows.ChannelVoice, workflows.ChannelWhatsApp:
	default:
		return appointment.Request{}, fmt.Errorf("--channel %q: use api, voice or whatsapp", f.channel)
	}
	if f.deposit < 0 {
		return appointment.Request{}, errors.New("--deposit must not be negative")
	}
	return appointment.Request{
		Tenant: f.tenant, Customer: phonenumbers.Format(num, phonenumbers.E164), Service: f.service, ResourceID: f.resource,
		SlotStart: start, Channel: workflows.Channel(f.channel), DepositAmount: f.deposit, Currency: strings.ToLower(f.currency),
		PaymentMethod: f.method,
	}, nil
}

// book starts a booking and, with --wait, waits for its outcome: nil only
// when it ended Confirmed.
func book(args []string, stdout, stderr io.Writer) error {
	f, req, err := parseBook(args, stdout)
	if err != nil {
		return err
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	req.Timezone = cfg.Timezone.String()
	if req.CustomerKey, err = cfg.CustomerKeys().Key(req.Tenant, req.Customer); err != nil {
		return err
	}
	ctx, stop := stack.SignalContext()
	defer stop()
	if req.SlotStart.IsZero() {
		if req.SlotStart, err = nextFreeSlot(ctx, cfg, req); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "next free slot: %s\n", req.SlotStart.Format(time.RFC3339))
	}
	tc, err := dialTemporal(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer tc.Close()
	run, existing, err := appointment.Start(ctx, tc, cfg.TaskQueue, req)
	if err != nil {
		return err
	}
	if existing {
		fmt.Fprintf(stdout, "this intent was already booked: %s (no new booking started)\n", run.GetID())
	} else {
		fmt.Fprintf(stdout, "started %s (run %s)\n", run.GetID(), run.GetRunID())
	}
	if !f.wait {
		return nil
	}
	return awaitOutcome(ctx, run, stdout)
}

// awaitOutcome prints the booking's final state; a booking that did not
// end Confirmed is a notConfirmedError.
func awaitOutcome(ctx context.Context, run client.WorkflowRun, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var st appointment.State
	if err := run.Get(ctx, &st); err != nil {
		return fmt.Errorf("booking %s: %w", run.GetID(), err)
	}
	if err := printState(stdout, run.GetID(), st); err != nil {
		return err
	}
	if st.Status != workflows.StatusConfirmed {
		return &notConfirmedError{id: run.GetID(), status: st.Status, reason: st.Reason}
	}
	return nil
}

// nextFreeSlot asks the calendar API for the next slot of the service the
// customer can book.
func nextFreeSlot(ctx context.Context, cfg config.Config, req appointment.Request) (time.Time, error) {
	token, ok := cfg.TokenFor(req.Tenant)
	if !ok {
		return time.Time{}, fmt.Errorf("--start next: no API token for tenant %s in BOOKONCE_API_TOKENS", req.Tenant)
	}
	s, err := nextslot.Find(ctx, calendar.NewClient(cfg.CalendarURL, token), req.Service, req.Customer, time.Now(), cfg.Timezone)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start next: %w\n(is `make run` running?)", err)
	}
	return s.Start, nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/workflows"
)

// bookFlags are the flags of "starter book".
type bookFlags struct {
	tenant, customer, service, resource, start, channel, currency, method string
	deposit                                                               int64
	wait                                                                  bool
}

func parseBook(args []string) (bookFlags, error) {
	var f bookFlags
	fs := flag.NewFlagSet("book", flag.ContinueOnError)
	fs.StringVar(&f.tenant, "tenant", config.DefaultTenant, "tenant")
	fs.StringVar(&f.customer, "customer", "", "customer phone number, E.164 (e.g. +4915112345678)")
	fs.StringVar(&f.service, "service", "", "service, e.g. tire-change or inspection")
	fs.StringVar(&f.resource, "resource", "", "resource (bay or technician); empty picks a free one")
	fs.StringVar(&f.start, "start", "", "slot start, RFC 3339 with zone (e.g. 2026-12-01T14:00:00+01:00)")
	fs.StringVar(&f.channel, "channel", string(workflows.ChannelAPI), "channel: api, voice or whatsapp")
	fs.Int64Var(&f.deposit, "deposit", 2000, "deposit in minor units (2000 = 20.00)")
	fs.StringVar(&f.currency, "currency", "eur", "deposit currency")
	fs.StringVar(&f.method, "payment-method", "pm_card_visa", "card for the deposit (test cards: pm_card_visa, pm_card_chargeDeclined)")
	fs.BoolVar(&f.wait, "wait", true, "wait for the booking's outcome")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	var missing []string
	for name, v := range map[string]string{"--customer": f.customer, "--service": f.service, "--start": f.start} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return f, fmt.Errorf("book needs %s (see starter book -h)", strings.Join(sortStrings(missing), ", "))
	}
	return f, nil
}

func (f bookFlags) request() (workflows.BookingRequest, error) {
	num, err := phonenumbers.Parse(f.customer, "DE")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return workflows.BookingRequest{}, fmt.Errorf("--customer %q is not a valid phone number; use E.164 such as +4915112345678", f.customer)
	}
	start, err := time.Parse(time.RFC3339, f.start)
	if err != nil {
		return workflows.BookingRequest{}, fmt.Errorf("--start %q: use RFC 3339 with a zone, e.g. 2026-12-01T14:00:00+01:00", f.start)
	}
	switch workflows.Channel(f.channel) {
	case workflows.ChannelAPI, workflows.ChannelVoice, workflows.ChannelWhatsApp:
	default:
		return workflows.BookingRequest{}, fmt.Errorf("--channel %q: use api, voice or whatsapp", f.channel)
	}
	if f.deposit < 0 {
		return workflows.BookingRequest{}, errors.New("--deposit must not be negative")
	}
	return workflows.BookingRequest{
		Tenant: f.tenant, Customer: phonenumbers.Format(num, phonenumbers.E164), Service: f.service, ResourceID: f.resource,
		SlotStart: start, Channel: workflows.Channel(f.channel), DepositAmount: f.deposit, Currency: strings.ToLower(f.currency),
		PaymentMethod: f.method,
	}, nil
}

func book(args []string) error {
	f, err := parseBook(args)
	if err != nil {
		return err
	}
	req, err := f.request()
	if err != nil {
		return err
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	req.Timezone = cfg.Timezone.String()
	ctx, stop := stack.SignalContext()
	defer stop()
	tc, err := stack.Dial(ctx, cfg, stack.Logger(cfg, os.Stderr))
	if err != nil {
		return fmt.Errorf("%w\n(is `make run` running, or TEMPORAL_ADDRESS set?)", err)
	}
	defer tc.Close()
	run, existing, err := workflows.StartAppointment(ctx, tc, cfg.TaskQueue, req)
	if err != nil {
		return err
	}
	if existing {
		fmt.Printf("this intent was already booked: %s (no new booking started)\n", run.GetID())
	} else {
		fmt.Printf("started %s (run %s)\n", run.GetID(), run.GetRunID())
	}
	if !f.wait {
		return nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var st workflows.BookingState
	if err := run.Get(waitCtx, &st); err != nil {
		return fmt.Errorf("booking %s: %w", run.GetID(), err)
	}
	printState(os.Stdout, run.GetID(), st)
	return nil
}

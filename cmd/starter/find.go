package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nyaruka/phonenumbers"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// findLimit caps the workflows one find lists: a customer's conversation,
// appointments and bookings are far fewer.
const findLimit = 200

// foundWorkflow is one of a customer's workflows as find prints it: the
// number masked wherever it appears.
type foundWorkflow struct {
	ID, Type, Status, Booking, Customer string
	Started                             time.Time
}

// findCmd lists a customer's workflows (conversation, appointments,
// bookings) by the customer key, which it computes from the number with
// BOOKONCE_CUSTOMER_ID_KEY: the IDs and search attributes Temporal shows
// carry only the key.
func findCmd(args []string, stdout, stderr io.Writer) error {
	tenant, number, err := parseCustomer("find", args, stdout)
	if err != nil {
		return err
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	key, err := cfg.CustomerKeys().Key(tenant, number)
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
	found, err := findCustomer(ctx, tc, tenant, number, key)
	if err != nil {
		return err
	}
	return printFound(stdout, mask.Phones(number), key, found)
}

// parseCustomer parses the flags of a command about one customer,
// --customer <E.164> [--tenant <tenant>], and returns the tenant and the
// number in E.164.
func parseCustomer(name string, args []string, stdout io.Writer) (tenant, number string, err error) {
	fs := newFlags(name, "--customer <E.164> [--tenant <tenant>]")
	var customer string
	fs.StringVar(&tenant, "tenant", config.DefaultTenant, "tenant")
	fs.StringVar(&customer, "customer", "", "customer phone number, E.164 (e.g. +4915112345678)")
	err = parse(fs, args, stdout, func(rest []string) error {
		if len(rest) != 0 {
			return fmt.Errorf("unexpected argument %q: the number goes in --customer", mask.Phones(rest[0]))
		}
		var err error
		number, err = e164(customer)
		return err
	})
	return tenant, number, err
}

// e164 checks --customer: a valid number, returned in E.164.
func e164(customer string) (string, error) {
	if customer == "" {
		return "", errors.New("--customer is required, e.g. --customer +4915112345678")
	}
	num, err := phonenumbers.Parse(customer, "DE")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return "", fmt.Errorf("--customer %q is not a valid phone number; use E.164 such as +4915112345678", mask.Phones(customer))
	}
	return phonenumbers.Format(num, phonenumbers.E164), nil
}

// findCustomer lists the tenant's workflows of the customer: by key, and
// those started before keys by the number (CustomerPhone, or the legacy
// conversation ID), so a customer's history before the upgrade is found
// too.
func findCustomer(ctx context.Context, tc client.Client, tenant, number string, key customerid.Key) ([]foundWorkflow, error) {
	q := fmt.Sprintf(`%s = %q OR %s = %q OR WorkflowId = %q`, workflows.CustomerKeyKey.GetName(), key,
		workflows.CustomerPhoneKey.GetName(), number, conversation.LegacyWorkflowID(tenant, number))
	res, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: findLimit, Query: q})
	if err != nil {
		return nil, fmt.Errorf("find the customer's workflows: %w", err)
	}
	var out []foundWorkflow
	for _, e := range res.GetExecutions() {
		id := e.GetExecution().GetWorkflowId()
		if !strings.Contains(id, ":"+tenant+":") { // CustomerPhone is not per tenant
			continue
		}
		sa := e.GetSearchAttributes().GetIndexedFields()
		out = append(out, foundWorkflow{
			ID: mask.Phones(id), Type: e.GetType().GetName(), Status: strings.TrimPrefix(e.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_"),
			Booking: keyword(sa, workflows.BookingStatusKey.GetName()), Customer: mask.Phones(number), Started: e.GetStartTime().AsTime(),
		})
	}
	return out, nil
}

// keyword is a keyword search attribute's value; "" when unset.
func keyword(sa map[string]*commonpb.Payload, name string) string {
	var v string
	if p, ok := sa[name]; ok {
		if err := converter.GetDefaultDataConverter().FromPayload(p, &v); err != nil {
			return ""
		}
	}
	return v
}

// printFound prints the list, newest first as visibility returns it.
func printFound(w io.Writer, masked string, key customerid.Key, found []foundWorkflow) error {
	fmt.Fprintf(w, "customer %s (key %s): %d workflow(s)\n", masked, key, len(found))
	if len(found) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nWORKFLOW ID\tTYPE\tSTATUS\tBOOKING\tCUSTOMER\tSTARTED")
	for _, f := range found {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.ID, f.Type, f.Status, f.Booking, f.Customer, f.Started.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

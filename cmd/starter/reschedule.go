package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/cmd/internal/nextslot"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// rescheduleCmd moves a confirmed booking to another slot through the
// gateway's API (the booking's reschedule Update). The Idempotency-Key
// defaults to one derived from the workflow ID and the new start, so
// running the same command again answers the first result instead of
// moving twice.
func rescheduleCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reschedule", "--start <RFC 3339 | next> [--resource ID] [--idempotency-key KEY] <workflow-id>")
	start := fs.String("start", "", `the new slot's start, RFC 3339 with zone (e.g. 2026-12-01T14:00:00+01:00), or "next": the next free slot`)
	resource := fs.String("resource", "", "the resource to book (default: any that offers the service)")
	key := fs.String("idempotency-key", "", "the request's Idempotency-Key (default: derived from the workflow ID and the start)")
	var at time.Time
	if err := parse(fs, args, stdout, func(rest []string) error {
		if err := appointmentArg(rest); err != nil {
			return err
		}
		switch {
		case *start == "":
			return errors.New(`--start is required: RFC 3339 with a zone, or "next"`)
		case *start == nextslot.StartNext:
			return nil
		}
		var err error
		if at, err = time.Parse(time.RFC3339, *start); err != nil {
			return fmt.Errorf(`--start %q: use RFC 3339 with a zone, e.g. 2026-12-01T14:00:00+01:00, or "next"`, *start)
		}
		return nil
	}); err != nil {
		return err
	}
	id := fs.Arg(0)
	if at.IsZero() {
		var err error
		if at, err = nextFreeSlotFor(id, stderr); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "next free slot: %s\n", at.Format(time.RFC3339))
	}
	if *key == "" {
		*key = "starter-reschedule:" + id + "@" + at.UTC().Format(time.RFC3339)
	}
	st, err := postReschedule(id, *key, lifecycle.RescheduleRequest{Start: at, ResourceID: *resource})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "booking   %s\nstatus    %s\nslot      %s\nbooked    %s\n", id, st.Status, st.SlotStart.Format(time.RFC3339), st.BookingID)
	if st.ReviewCase != "" {
		fmt.Fprintf(stdout, "review    %s (open)\n", st.ReviewCase)
	}
	if st.Reason != "" {
		fmt.Fprintf(stdout, "reason    %s\n", st.Reason)
	}
	if st.Status != workflows.StatusConfirmed {
		return reported(exitFailed)
	}
	return nil
}

// nextFreeSlotFor finds the next slot the booking id's service offers
// that none of the customer's bookings overlaps.
func nextFreeSlotFor(id string, stderr io.Writer) (time.Time, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return time.Time{}, err
	}
	ctx, stop := stack.SignalContext()
	defer stop()
	tc, err := dialTemporal(ctx, cfg, stderr)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start next: %w", err)
	}
	defer tc.Close()
	st, err := lifecycle.StateOf(ctx, tc, id)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start next: %w", err)
	}
	tenant, _ := reference.TenantOf(id) // appointmentArg checked the form
	token, ok := cfg.TokenFor(tenant)
	if !ok {
		return time.Time{}, fmt.Errorf("--start next: no API token for tenant %s in BOOKONCE_API_TOKENS", tenant)
	}
	s, err := nextslot.Find(ctx, calendar.NewClient(cfg.CalendarURL, token), st.Service, st.Customer, time.Now(), cfg.Timezone)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start next: %w\n(is `make run` running?)", err)
	}
	return s.Start, nil
}

// postReschedule sends the request; a taken slot becomes an error that
// names the free slots the calendar offered.
func postReschedule(id, key string, req lifecycle.RescheduleRequest) (lifecycle.State, error) {
	g, err := dialGateway()
	if err != nil {
		return lifecycle.State{}, err
	}
	body, err := json.Marshal(map[string]string{"start": req.Start.Format(time.RFC3339), "resource_id": req.ResourceID})
	if err != nil {
		return lifecycle.State{}, fmt.Errorf("encode request: %w", err)
	}
	hr, err := http.NewRequest(http.MethodPost, g.base+"/v1/appointments/"+url.PathEscape(id)+"/reschedule", bytes.NewReader(body))
	if err != nil {
		return lifecycle.State{}, err
	}
	hr.Header.Set("Authorization", "Bearer "+g.token)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Idempotency-Key", key)
	resp, err := g.hc.Do(hr)
	if err != nil {
		return lifecycle.State{}, fmt.Errorf("%w\n(is `make run` or the gateway running? staff commands call its admin listener, ADMIN_LISTEN=%s)", err, strings.TrimPrefix(g.base, "http://"))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return lifecycle.State{}, fmt.Errorf("read the gateway's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return lifecycle.State{}, rescheduleProblem(resp.StatusCode, data)
	}
	var st lifecycle.State
	if err := json.Unmarshal(data, &st); err != nil {
		return lifecycle.State{}, fmt.Errorf("decode the gateway's answer: %w", err)
	}
	return st, nil
}

// rescheduleProblem turns the gateway's problem into a sentence.
func rescheduleProblem(status int, data []byte) error {
	var p struct {
		Code         string      `json:"code"`
		Detail       string      `json:"detail"`
		Alternatives []time.Time `json:"alternatives"`
	}
	if json.Unmarshal(data, &p) != nil || p.Code == "" {
		return fmt.Errorf("gateway answered %d: %s", status, data)
	}
	if p.Code != "slot_unavailable" {
		return fmt.Errorf("not moved (%s): %s", p.Code, p.Detail)
	}
	free := make([]string, 0, len(p.Alternatives))
	for _, t := range p.Alternatives {
		free = append(free, t.Format(time.RFC3339))
	}
	if len(free) == 0 {
		return errors.New("not moved: the slot is taken and the calendar offered no other nearby")
	}
	return fmt.Errorf("not moved: the slot is taken; free nearby: %s", strings.Join(free, ", "))
}

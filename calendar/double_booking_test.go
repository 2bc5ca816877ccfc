package calendar_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/outcome"
)

// frontDeskBooking books tire-change at tuesday14 on bay-1 the way a person
// at the front desk does: another reference, the number typed nationally.
func frontDeskBooking(t *testing.T, f fixture) calendar.Booking {
	t.Helper()
	ctx := context.Background()
	req := hold("frontdesk:4711")
	req.Customer = "0151 1234 5678"
	h, err := f.client.CreateHold(ctx, "desk-hold", req)
	require.NoError(t, err)
	b, err := f.client.ConfirmHold(ctx, "desk-confirm", h.ID)
	require.NoError(t, err)
	return b
}

// TestSecondBookingOfCustomerUnderAnotherReferenceIsRefused: the front
// desk booked a customer's tire change on bay-1; the agent's hold for the
// same customer, service and time under its own reference (bay-2 is free)
// is refused with customer_already_booked naming the front desk's booking,
// stored and replayed. Another service, a later slot and a deliberate
// second booking are not refused.
func TestSecondBookingOfCustomerUnderAnotherReferenceIsRefused(t *testing.T) {
	f := newFixture(t)
	desk := frontDeskBooking(t, f)
	require.Equal(t, "+4915112345678", desk.Customer, "the customer is stored normalised (E.164)")

	agent := `{"service":"tire-change","start":"2026-12-01T14:10:00+01:00","customer":"whatsapp:+4915112345678","reference":"appointment:demo:agent"}`
	first := post(t, f.url+"/v1/holds", "agent-hold", agent)
	require.Equal(t, http.StatusConflict, first.status, first.body)
	require.Equal(t, "application/problem+json", first.contentType)
	var p struct {
		Code     string        `json:"code"`
		Existing calendar.Hold `json:"existing"`
	}
	require.NoError(t, json.Unmarshal([]byte(first.body), &p))
	require.Equal(t, calendar.CodeCustomerAlreadyBooked, p.Code)
	require.Equal(t, desk.ID, p.Existing.BookingID)
	require.Equal(t, desk.HoldID, p.Existing.ID)
	require.Equal(t, "frontdesk:4711", p.Existing.Reference)
	require.Equal(t, 1, f.count(t, "status IN ('held', 'confirmed')"), "no second reservation")

	again := post(t, f.url+"/v1/holds", "agent-hold", agent)
	require.Equal(t, first.body, again.body, "the refusal is the key's decided answer")
	require.Equal(t, "true", again.replayed)

	// The typed client: a final outcome, a typed error, the existing booking.
	_, err := f.client.CreateHold(context.Background(), "agent-hold-2", calendar.HoldRequest{
		Service: "tire-change", Start: tuesday14, Customer: "+49 151 12345678", Reference: "appointment:demo:agent-2"})
	require.ErrorIs(t, err, calendar.ErrCustomerAlreadyBooked)
	require.Equal(t, outcome.Final, outcome.Of(err))
	existing, ok := calendar.ExistingOf(err)
	require.True(t, ok)
	require.Equal(t, desk.ID, existing.BookingID)

	for i, tc := range []struct {
		name   string
		mutate func(*calendar.HoldRequest)
	}{
		{"another service at the same time", func(r *calendar.HoldRequest) { r.Service = "oil-change" }},
		{"the same service right after", func(r *calendar.HoldRequest) { r.Start = tuesday14.Add(30 * time.Minute) }},
		{"a deliberate second booking", func(r *calendar.HoldRequest) { r.DeliberateSecond = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := calendar.HoldRequest{Service: "tire-change", Start: tuesday14, Customer: "+4915112345678", Reference: fmt.Sprintf("ref-%d", i)}
			tc.mutate(&req)
			h, err := f.client.CreateHold(context.Background(), fmt.Sprintf("key-%d", i), req)
			require.NoError(t, err)
			require.Equal(t, req.DeliberateSecond, h.DeliberateSecond)
		})
	}
	require.Equal(t, 4, f.count(t, "status IN ('held', 'confirmed') AND customer = '+4915112345678'"))
}

// TestConcurrentDoubleBookingsOfOneCustomerOneWins: holds of one customer
// for one service at overlapping times under different references, released
// together, with two bays free: exactly one reservation; every other request
// is refused as customer_already_booked naming it. The exclusion
// constraint decides, not a check before the insert.
func TestConcurrentDoubleBookingsOfOneCustomerOneWins(t *testing.T) {
	f := newFixture(t)
	const n = 20
	holds, errs := make([]calendar.Hold, n), make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req := hold(fmt.Sprintf("ref-%d", i))
			req.ResourceID = "" // any free bay
			req.Start = tuesday14.Add(time.Duration(i%3) * 10 * time.Minute)
			<-start
			holds[i], errs[i] = f.client.CreateHold(context.Background(), fmt.Sprintf("key-%d", i), req)
		})
	}
	close(start)
	wg.Wait()
	var winner string
	for i, err := range errs {
		if err == nil {
			require.Empty(t, winner, "a second hold won: %s and %s", winner, holds[i].ID)
			winner = holds[i].ID
		}
	}
	require.NotEmpty(t, winner)
	for _, err := range errs {
		if err != nil {
			require.True(t, errors.Is(err, calendar.ErrCustomerAlreadyBooked), "%v", err)
			existing, ok := calendar.ExistingOf(err)
			require.True(t, ok)
			require.Equal(t, winner, existing.ID)
		}
	}
	require.Equal(t, 1, f.count(t, "status IN ('held', 'confirmed')"))
}

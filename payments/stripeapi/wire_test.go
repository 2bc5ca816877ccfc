package stripeapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"
)

// createParams is a deposit authorisation as stripe-go sends it.
func createParams(key, ref string, amount int64, pm string) *stripe.PaymentIntentCreateParams {
	p := &stripe.PaymentIntentCreateParams{
		Amount: stripe.Int64(amount), Currency: stripe.String("eur"),
		CaptureMethod: stripe.String("manual"), Confirm: stripe.Bool(true), PaymentMethod: stripe.String(pm),
		Metadata: map[string]string{"booking_reference": ref, "step": "deposit"},
	}
	p.SetIdempotencyKey(key)
	return p
}

// Plain stripe-go against the API: every mutating call retried with its key
// is answered byte for byte from the store, marked Idempotent-Replayed, and
// has one effect.
func TestStripeGoRetriesReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	first, err := e.sc.V1PaymentIntents.Create(ctx, createParams("k-create", "wf-raw", 5000, "pm_card_visa"))
	require.NoError(t, err)
	require.Equal(t, stripe.PaymentIntentStatusRequiresCapture, first.Status)
	require.Equal(t, int64(5000), first.AmountCapturable)
	require.Equal(t, "wf-raw", first.Metadata["booking_reference"])
	require.Equal(t, stripe.PaymentIntentCaptureMethodManual, first.CaptureMethod)
	require.Empty(t, first.LastResponse.Header.Get("Idempotent-Replayed"))
	again, err := e.sc.V1PaymentIntents.Create(ctx, createParams("k-create", "wf-raw", 5000, "pm_card_visa"))
	require.NoError(t, err)
	require.Equal(t, "true", again.LastResponse.Header.Get("Idempotent-Replayed"))
	require.Equal(t, first.LastResponse.RawJSON, again.LastResponse.RawJSON)
	require.Equal(t, 1, e.count("payment_intents", ""))

	capture := func() *stripe.PaymentIntent {
		p := &stripe.PaymentIntentCaptureParams{AmountToCapture: stripe.Int64(4000)}
		p.SetIdempotencyKey("k-capture")
		pi, err := e.sc.V1PaymentIntents.Capture(ctx, first.ID, p)
		require.NoError(t, err)
		return pi
	}
	c1, c2 := capture(), capture()
	require.Equal(t, stripe.PaymentIntentStatusSucceeded, c1.Status)
	require.Equal(t, int64(4000), c1.AmountReceived)
	require.Equal(t, "true", c2.LastResponse.Header.Get("Idempotent-Replayed"))
	require.Equal(t, c1.LastResponse.RawJSON, c2.LastResponse.RawJSON)
	status, captured, _ := e.intentAmounts(first.ID)
	require.Equal(t, "succeeded", status)
	require.Equal(t, int64(4000), captured)

	refund := func() *stripe.Refund {
		p := &stripe.RefundCreateParams{PaymentIntent: stripe.String(first.ID), Amount: stripe.Int64(1500),
			Reason: stripe.String("requested_by_customer"), Metadata: map[string]string{"booking_reference": "wf-raw"}}
		p.SetIdempotencyKey("k-refund")
		re, err := e.sc.V1Refunds.Create(ctx, p)
		require.NoError(t, err)
		return re
	}
	r1, r2 := refund(), refund()
	require.Equal(t, stripe.RefundStatusSucceeded, r1.Status)
	require.Equal(t, first.ID, r1.PaymentIntent.ID)
	require.Equal(t, "true", r2.LastResponse.Header.Get("Idempotent-Replayed"))
	require.Equal(t, r1.ID, r2.ID)
	require.Equal(t, 1, e.count("refunds", ""))
	_, _, refunded := e.intentAmounts(first.ID)
	require.Equal(t, int64(1500), refunded)
	got, err := e.sc.V1Refunds.Retrieve(ctx, r1.ID, nil)
	require.NoError(t, err)
	require.Equal(t, int64(1500), got.Amount)

	// The expanded charge shows Stripe's view: the released 1000 of the
	// partial capture and the refund both count as refunded.
	rp := &stripe.PaymentIntentRetrieveParams{}
	rp.AddExpand("latest_charge")
	pi, err := e.sc.V1PaymentIntents.Retrieve(ctx, first.ID, rp)
	require.NoError(t, err)
	require.Equal(t, int64(4000), pi.LatestCharge.AmountCaptured)
	require.Equal(t, int64(2500), pi.LatestCharge.AmountRefunded)

	second, err := e.sc.V1PaymentIntents.Create(ctx, createParams("k-create-2", "wf-raw-2", 3000, "pm_card_visa"))
	require.NoError(t, err)
	cancel := func() *stripe.PaymentIntent {
		p := &stripe.PaymentIntentCancelParams{CancellationReason: stripe.String("abandoned")}
		p.SetIdempotencyKey("k-cancel")
		pi, err := e.sc.V1PaymentIntents.Cancel(ctx, second.ID, p)
		require.NoError(t, err)
		return pi
	}
	x1, x2 := cancel(), cancel()
	require.Equal(t, stripe.PaymentIntentStatusCanceled, x1.Status)
	require.Equal(t, stripe.PaymentIntentCancellationReasonAbandoned, x1.CancellationReason)
	require.NotZero(t, x1.CanceledAt)
	require.Equal(t, "true", x2.LastResponse.Header.Get("Idempotent-Replayed"))
	require.Equal(t, x1.LastResponse.RawJSON, x2.LastResponse.RawJSON)
	require.Equal(t, 1, e.count("payment_intents", "status = 'canceled'"))
}

// A decline is a decided outcome: stored with the key, replayed, one row.
func TestDeclinedCardIsStoredAndReplayed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	decline := func() *stripe.Error {
		_, err := e.sc.V1PaymentIntents.Create(ctx, createParams("k-declined", "wf-declined", 5000, "pm_card_chargeDeclined"))
		var se *stripe.Error
		require.True(t, errors.As(err, &se), "%v", err)
		return se
	}
	d1, d2 := decline(), decline()
	require.Equal(t, http.StatusPaymentRequired, d1.HTTPStatusCode)
	require.Equal(t, stripe.ErrorTypeCard, d1.Type)
	require.Equal(t, stripe.ErrorCodeCardDeclined, d1.Code)
	require.Equal(t, stripe.DeclineCode("generic_decline"), d1.DeclineCode)
	var cardErr *stripe.CardError
	require.ErrorAs(t, d1.Err, &cardErr)
	require.NotNil(t, d1.PaymentIntent)
	require.Equal(t, stripe.PaymentIntentStatusRequiresPaymentMethod, d1.PaymentIntent.Status)
	require.Equal(t, stripe.ErrorCodeCardDeclined, d1.PaymentIntent.LastPaymentError.Code)

	require.Equal(t, "true", d2.LastResponse.Header.Get("Idempotent-Replayed"))
	require.Equal(t, d1.LastResponse.RawJSON, d2.LastResponse.RawJSON)
	require.Equal(t, 1, e.count("payment_intents", ""))
	require.Equal(t, 1, e.count("payment_intents", "status = 'requires_payment_method' AND charge_id IS NULL"))

	// A decline does not occupy the booking step: another card may try.
	ok, err := e.sc.V1PaymentIntents.Create(ctx, createParams("k-second-card", "wf-declined", 5000, "pm_card_mastercard"))
	require.NoError(t, err)
	require.Equal(t, stripe.PaymentIntentStatusRequiresCapture, ok.Status)
}

// TestMatrix03KeyReusedOtherPayload proves failure-matrix item 3 (one key
// reused with a different payload): a loud 400 idempotency_error (Stripe's
// status; it was 422 before payment links, see idempotency.Store), the
// payment tables unchanged to the byte, and the key still replays its
// first answer.
func TestMatrix03KeyReusedOtherPayload(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	first, err := e.sc.V1PaymentIntents.Create(ctx, createParams("k-reused", "wf-reused", 5000, "pm_card_visa"))
	require.NoError(t, err)
	before := e.snapshot()
	for _, other := range []*stripe.PaymentIntentCreateParams{
		createParams("k-reused", "wf-reused", 6000, "pm_card_visa"),       // another amount
		createParams("k-reused", "wf-other", 5000, "pm_card_visa"),        // another booking
		createParams("k-reused", "wf-reused", 5000, "pm_card_mastercard"), // another card
	} {
		_, err = e.sc.V1PaymentIntents.Create(ctx, other)
		var se *stripe.Error
		require.ErrorAs(t, err, &se)
		require.Equal(t, http.StatusBadRequest, se.HTTPStatusCode)
		require.Equal(t, stripe.ErrorTypeIdempotency, se.Type)
	}
	require.Equal(t, before, e.snapshot(), "the rejected requests wrote nothing")
	require.Equal(t, 1, e.count("payment_intents", ""))
	require.Equal(t, 1, e.count("payment_intents", "amount = 5000 AND booking_reference = 'wf-reused'"))
	again, err := e.sc.V1PaymentIntents.Create(ctx, createParams("k-reused", "wf-reused", 5000, "pm_card_visa"))
	require.NoError(t, err)
	require.Equal(t, first.LastResponse.RawJSON, again.LastResponse.RawJSON, "the first answer, byte for byte")

	// Without a key there is no request at all.
	r := e.post("/v1/payment_intents", "", authorizeForm("wf-nokey", "5000"))
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Equal(t, "idempotency_error", r.err.Type)
	require.Equal(t, 1, e.count("payment_intents", ""))
}

// Reference protection on the wire: another key for the same booking step
// answers the existing intent.
func TestReferenceProtectionOnTheWire(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.post("/v1/payment_intents", "k-a", authorizeForm("wf-wire", "5000"))
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	b := e.post("/v1/payment_intents", "k-b", authorizeForm("wf-wire", "5000"))
	require.Equal(t, http.StatusOK, b.status, "%s", b.body)
	require.Equal(t, a.object["id"], b.object["id"])
	c := e.post("/v1/payment_intents", "k-c", authorizeForm("wf-wire", "5001"))
	require.Equal(t, http.StatusBadRequest, c.status)
	require.Equal(t, "invalid_request_error", c.err.Type)
	require.Equal(t, "reference_conflict", c.err.Code)
	require.Equal(t, "metadata[booking_reference]", c.err.Param)
	require.Equal(t, 1, e.count("payment_intents", ""))
}

// Search (Stripe's query language subset), list with paging, and tenant
// isolation.
func TestSearchListAndTenants(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	var ids []string
	for i, ref := range []string{"wf-s1", "wf-s2", "wf-s3", "wf-s4", "wf-s5"} {
		pi, err := e.sc.V1PaymentIntents.Create(ctx, createParams("k-"+ref, ref, int64(1000+i), "pm_card_visa"))
		require.NoError(t, err)
		ids = append(ids, pi.ID)
	}
	cp := &stripe.PaymentIntentCancelParams{}
	cp.SetIdempotencyKey("k-cancel-s2")
	_, err := e.sc.V1PaymentIntents.Cancel(ctx, ids[1], cp)
	require.NoError(t, err)

	search := func(q string, limit int64) []string {
		p := &stripe.PaymentIntentSearchParams{}
		p.Query = q
		p.Limit = stripe.Int64(limit)
		var out []string
		for pi, err := range e.sc.V1PaymentIntents.Search(ctx, p) {
			require.NoError(t, err)
			out = append(out, pi.ID)
		}
		return out
	}
	require.Equal(t, []string{ids[2]}, search(`metadata['booking_reference']:'wf-s3'`, 10))
	require.Equal(t, []string{ids[2]}, search(`metadata['booking_reference']:"wf-s3" AND status:'requires_capture'`, 10))
	require.Empty(t, search(`metadata['booking_reference']:'wf-s2' AND status:'requires_capture'`, 10))
	require.Equal(t, []string{ids[1]}, search(`status:'canceled'`, 10))
	require.Equal(t, []string{ids[4], ids[3], ids[2], ids[0]}, search(`status:'requires_capture' AND currency:'eur'`, 3),
		"newest first, across pages")
	require.Equal(t, []string{ids[3]}, search(`amount:1003`, 10))

	for _, bad := range []string{`status:'x' OR status:'y'`, `-status:'canceled'`, `amount>10`, `description:'x'`, `status:canceled`, `metadata['k:'v'`} {
		r := e.do(http.MethodGet, "/v1/payment_intents/search?query="+url.QueryEscape(bad), "", secretKey, "")
		require.Equal(t, http.StatusBadRequest, r.status, bad)
		require.Equal(t, "query", r.err.Param, bad)
	}

	var listed []string
	lp := &stripe.PaymentIntentListParams{}
	lp.Limit = stripe.Int64(2)
	for pi, err := range e.sc.V1PaymentIntents.List(ctx, lp) {
		require.NoError(t, err)
		listed = append(listed, pi.ID)
	}
	require.Equal(t, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}, listed)

	// Another tenant sees none of it.
	other := rawClient(e.srv, otherTenantKey)
	_, err = other.V1PaymentIntents.Retrieve(ctx, ids[0], nil)
	var se *stripe.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusNotFound, se.HTTPStatusCode)
	require.Equal(t, stripe.ErrorCodeResourceMissing, se.Code)
	n := 0
	for _, err := range other.V1PaymentIntents.List(ctx, nil) {
		require.NoError(t, err)
		n++
	}
	require.Zero(t, n)

	// A wrong key gets Stripe's error shape, which stripe-go understands.
	_, err = rawClient(e.srv, "sk_test_wrong").V1PaymentIntents.Retrieve(ctx, ids[0], nil)
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusUnauthorized, se.HTTPStatusCode)
	require.Equal(t, stripe.ErrorTypeInvalidRequest, se.Type)
}

package stripeapi_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/payments/stripeapi"
)

// The saga's happy path plus its compensation, each call retried with the
// same key as Temporal would: one effect per operation.
func TestGatewayEachOperationHasOneEffect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	var pi payments.Intent
	for range 3 {
		got, err := e.gw.Authorize(ctx, "wf-1/run-1/authorize", deposit("wf-1"))
		require.NoError(t, err)
		if pi.ID != "" {
			require.Equal(t, pi, got, "a retry answers the same intent")
		}
		pi = got
	}
	require.Equal(t, payments.StatusRequiresCapture, pi.Status)
	require.Equal(t, int64(5000), pi.Amount)
	require.Equal(t, "wf-1", pi.Reference)
	require.Equal(t, "deposit", pi.Step)
	require.Equal(t, 1, e.count("payment_intents", ""))

	for range 2 {
		got, err := e.gw.Capture(ctx, "wf-1/run-1/capture", pi.ID)
		require.NoError(t, err)
		require.Equal(t, payments.StatusSucceeded, got.Status)
		require.Equal(t, int64(5000), got.AmountCaptured)
	}
	status, captured, refunded := e.intentAmounts(pi.ID)
	require.Equal(t, []any{"succeeded", int64(5000), int64(0)}, []any{status, captured, refunded})

	var refundID string
	for range 3 {
		re, err := e.gw.Refund(ctx, "wf-1/run-1/refund", pi.ID, 2000)
		require.NoError(t, err)
		require.Equal(t, "succeeded", re.Status)
		require.Equal(t, int64(2000), re.Amount)
		if refundID != "" {
			require.Equal(t, refundID, re.ID)
		}
		refundID = re.ID
	}
	require.Equal(t, 1, e.count("refunds", ""))
	_, _, refunded = e.intentAmounts(pi.ID)
	require.Equal(t, int64(2000), refunded)

	// The rest, with amount 0 = everything left.
	re, err := e.gw.Refund(ctx, "wf-1/run-1/refund-rest", pi.ID, 0)
	require.NoError(t, err)
	require.Equal(t, int64(3000), re.Amount)
	got, found, err := e.gw.FindByReference(ctx, "wf-1", "deposit")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, int64(5000), got.AmountRefunded)

	// A refund under yet another key finds nothing left: a decided no.
	_, err = e.gw.Refund(ctx, "wf-1/run-2/refund", pi.ID, 0)
	require.Equal(t, outcome.Final, outcome.Of(err))
	require.Equal(t, payments.CodeChargeAlreadyRefunded, payments.CodeOf(err))
	require.Equal(t, 2, e.count("refunds", ""))
	require.Equal(t, int64(5000), e.sumRefunds(pi.ID))
}

func (e *env) sumRefunds(intentID string) int64 {
	e.t.Helper()
	var n int64
	require.NoError(e.t, e.pool.QueryRow(context.Background(),
		`SELECT coalesce(sum(amount), 0) FROM refunds WHERE payment_intent_id = $1`, intentID).Scan(&n))
	return n
}

// Compensations and retries under new keys (a reset workflow) must not fail
// on a step whose effect exists (rule 9).
func TestGatewayVoidAndCaptureAreIdempotentAcrossKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	pi, err := e.gw.Authorize(ctx, "k-auth", deposit("wf-void"))
	require.NoError(t, err)
	for _, key := range []string{"k-void", "k-void", "k-void-after-reset"} {
		got, err := e.gw.Void(ctx, key, pi.ID)
		require.NoError(t, err, "already canceled counts as success")
		require.Equal(t, payments.StatusCanceled, got.Status)
		require.Equal(t, pi.ID, got.ID)
	}
	status, _, _ := e.intentAmounts(pi.ID)
	require.Equal(t, "canceled", status)

	// Capturing a voided deposit is a decided no, not success.
	_, err = e.gw.Capture(ctx, "k-capture", pi.ID)
	require.Equal(t, outcome.Final, outcome.Of(err))
	require.Equal(t, payments.CodeUnexpectedState, payments.CodeOf(err))

	pi2, err := e.gw.Authorize(ctx, "k-auth-2", deposit("wf-capture"))
	require.NoError(t, err)
	for _, key := range []string{"k-cap", "k-cap-after-reset"} {
		got, err := e.gw.Capture(ctx, key, pi2.ID)
		require.NoError(t, err, "already succeeded counts as success")
		require.Equal(t, payments.StatusSucceeded, got.Status)
		require.Equal(t, int64(5000), got.AmountCaptured)
	}
	// A captured deposit cannot be voided: the caller must refund.
	_, err = e.gw.Void(ctx, "k-void-2", pi2.ID)
	require.Equal(t, outcome.Final, outcome.Of(err))
	require.Equal(t, payments.CodeUnexpectedState, payments.CodeOf(err))
}

// Rule 11: a second authorisation of one booking step under another key
// answers the first; another amount is a conflict; a void frees the step.
func TestGatewayReferenceProtection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	first, err := e.gw.Authorize(ctx, "run-1/authorize", deposit("wf-ref"))
	require.NoError(t, err)
	second, err := e.gw.Authorize(ctx, "run-2/authorize", deposit("wf-ref"))
	require.NoError(t, err)
	require.Equal(t, first.ID, second.ID)

	other := deposit("wf-ref")
	other.Amount = 7000
	_, err = e.gw.Authorize(ctx, "run-3/authorize", other)
	require.Equal(t, outcome.Final, outcome.Of(err))
	require.Equal(t, payments.CodeReferenceConflict, payments.CodeOf(err))
	require.Equal(t, 1, e.count("payment_intents", ""))
	require.Equal(t, 2.0, testutil.ToFloat64(e.store.Metrics().DuplicatesBlocked.WithLabelValues(
		stripeapi.LayerReference, "demo", stripeapi.OpCreateIntent)), "both blocked creates are counted (rule 12)")

	// Another step of the same booking is another authorisation.
	balance := deposit("wf-ref")
	balance.Step = "balance"
	b, err := e.gw.Authorize(ctx, "run-1/balance", balance)
	require.NoError(t, err)
	require.NotEqual(t, first.ID, b.ID)

	// After a void the step may be authorised again.
	_, err = e.gw.Void(ctx, "run-1/void", first.ID)
	require.NoError(t, err)
	again, err := e.gw.Authorize(ctx, "run-4/authorize", deposit("wf-ref"))
	require.NoError(t, err)
	require.NotEqual(t, first.ID, again.ID)
	require.Equal(t, 1, e.count("payment_intents", "booking_reference = 'wf-ref' AND step = 'deposit' AND status = 'requires_capture'"))
}

// Twenty concurrent authorisations of one booking step with twenty keys
// produce one intent, and every caller learns its ID.
func TestGatewayConcurrentAuthorizeOneIntent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const n = 20
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			pi, err := e.gw.Authorize(ctx, fmt.Sprintf("run-%d/authorize", i), deposit("wf-race"))
			ids[i], errs[i] = pi.ID, err
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "caller %d", i)
		require.Equal(t, ids[0], ids[i], "caller %d", i)
	}
	require.Equal(t, 1, e.count("payment_intents", ""))
	require.Equal(t, n, e.count("idempotency_keys", "state = 'completed'"), "every key is answered and stored")
}

func TestGatewayFindByReference(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	_, found, err := e.gw.FindByReference(ctx, "wf-none", "deposit")
	require.NoError(t, err)
	require.False(t, found)

	declined := deposit("wf-find")
	declined.PaymentMethod = "pm_card_chargeDeclined"
	_, err = e.gw.Authorize(ctx, "k-declined", declined)
	require.Equal(t, outcome.Final, outcome.Of(err))
	got, found, err := e.gw.FindByReference(ctx, "wf-find", "deposit")
	require.NoError(t, err)
	require.True(t, found, "a declined attempt is an answer too")
	require.Equal(t, payments.StatusRequiresPaymentMethod, got.Status)

	pi, err := e.gw.Authorize(ctx, "k-ok", deposit("wf-find"))
	require.NoError(t, err)
	got, found, err = e.gw.FindByReference(ctx, "wf-find", "deposit")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, pi.ID, got.ID, "the live authorisation wins over the decline")

	// Quotes in a reference are escaped in the query, not interpreted.
	odd, err := e.gw.Authorize(ctx, "k-odd", deposit(`wf-'quoted' \ ref`))
	require.NoError(t, err)
	got, found, err = e.gw.FindByReference(ctx, `wf-'quoted' \ ref`, "deposit")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, odd.ID, got.ID)

	_, found, err = e.gw.FindByReference(ctx, "wf-find", "balance")
	require.NoError(t, err)
	require.False(t, found)
}

func TestGatewayRefusesMissingKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.gw.Authorize(context.Background(), "", deposit("wf-nokey"))
	require.Equal(t, outcome.Final, outcome.Of(err))
	require.Equal(t, 0, e.count("payment_intents", ""), "stripe-go must not invent a key and charge")
}

package stripeapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"

	"github.com/bookonce/bookonce/payments/stripeapi"
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Now().UTC()} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// newClockEnv is the API on a settable clock, its pages in Berlin time.
func newClockEnv(t *testing.T) (*env, *clock) {
	t.Helper()
	c := newClock()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	return newEnvWith(t, func(s *stripeapi.Server) { s.Now, s.Timezone = c.Now, berlin }), c
}

// sessionParams is a deposit payment link as the payment saga will ask
// for it: manual capture, the booking reference on the intent.
func sessionParams(key, ref string, expiresAt time.Time) *stripe.CheckoutSessionCreateParams {
	p := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String("payment"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency: stripe.String("eur"), UnitAmount: stripe.Int64(5000),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("Deposit tire change")},
			},
			Quantity: stripe.Int64(1),
		}},
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{
			CaptureMethod: stripe.String("manual"), Description: stripe.String("Reifen Müller"),
			Metadata: map[string]string{"booking_reference": ref},
		},
		SuccessURL:        stripe.String("https://example.com/paid?session={CHECKOUT_SESSION_ID}"),
		CancelURL:         stripe.String("https://example.com/cancel"),
		ClientReferenceID: stripe.String(ref),
		Metadata:          map[string]string{"booking_reference": ref},
		Locale:            stripe.String("de"),
	}
	if !expiresAt.IsZero() {
		p.ExpiresAt = stripe.Int64(expiresAt.Unix())
	}
	p.SetIdempotencyKey(key)
	return p
}

// page is a hosted page answer.
type page struct {
	status int
	body   string
}

// payForm posts the hosted page's form as a script would: no browser, no
// key, no token.
func (e *env) payForm(sessionURL string, form url.Values) page {
	e.t.Helper()
	res, err := e.srv.Client().PostForm(sessionURL, form)
	require.NoError(e.t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	require.Equal(e.t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	return page{res.StatusCode, string(body)}
}

func (e *env) getPage(u string) page {
	e.t.Helper()
	res, err := e.srv.Client().Get(u)
	require.NoError(e.t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return page{res.StatusCode, string(body)}
}

// events lists the tenant's events of a type through stripe-go.
func (e *env) events(typ string) []*stripe.Event {
	e.t.Helper()
	p := &stripe.EventListParams{Type: stripe.String(typ)}
	var out []*stripe.Event
	for ev, err := range e.sc.V1Events.List(context.Background(), p) {
		require.NoError(e.t, err)
		require.Equal(e.t, stripe.APIVersion, ev.APIVersion)
		out = append(out, ev)
	}
	return out
}

// A payment link from creation to payment, on the wire: stripe-go's own
// types decode every answer and event; paying twice is refused.
func TestCheckoutSessionPaidOnHostedPage(t *testing.T) {
	t.Parallel()
	e, _ := newClockEnv(t)
	ctx := context.Background()

	cs, err := e.sc.V1CheckoutSessions.Create(ctx, sessionParams("k-cs", "appointment:demo:1", time.Time{}))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(cs.ID, "cs_test_"), cs.ID)
	require.Equal(t, "checkout.session", cs.Object)
	require.Equal(t, stripe.CheckoutSessionStatusOpen, cs.Status)
	require.Equal(t, stripe.CheckoutSessionPaymentStatusUnpaid, cs.PaymentStatus)
	require.Equal(t, int64(5000), cs.AmountTotal)
	require.Equal(t, stripe.CurrencyEUR, cs.Currency)
	require.Equal(t, "appointment:demo:1", cs.ClientReferenceID)
	require.Equal(t, "appointment:demo:1", cs.Metadata["booking_reference"])
	require.Equal(t, e.srv.URL+"/pay/"+cs.ID, cs.URL)
	require.Nil(t, cs.PaymentIntent, "Stripe creates the intent when the customer pays")
	require.InDelta(t, time.Now().Add(stripeapi.MaxSessionLifetime).Unix(), cs.ExpiresAt, 5, "Stripe's default: 24 hours")

	again, err := e.sc.V1CheckoutSessions.Create(ctx, sessionParams("k-cs", "appointment:demo:1", time.Time{}))
	require.NoError(t, err)
	require.Equal(t, cs.LastResponse.RawJSON, again.LastResponse.RawJSON)
	require.Equal(t, 1, e.count("checkout_sessions", ""))

	shown := e.getPage(cs.URL)
	require.Equal(t, http.StatusOK, shown.status)
	for _, want := range []string{`lang="de"`, "Reifen Müller", "50,00\u00a0€", "Uhr", `value="pm_card_visa"`, `value="pm_card_authenticationRequired"`} {
		require.Contains(t, shown.body, want)
	}

	paid := e.payForm(cs.URL, url.Values{"payment_method": {"pm_card_visa"}})
	require.Equal(t, http.StatusOK, paid.status, paid.body)
	require.Contains(t, paid.body, "Vielen Dank")
	require.Contains(t, paid.body, "https://example.com/paid?session="+cs.ID)

	twice := e.payForm(cs.URL, url.Values{"payment_method": {"pm_card_visa"}})
	require.Equal(t, http.StatusConflict, twice.status)
	require.Contains(t, twice.body, "bereits bezahlt")
	require.Equal(t, 1, e.count("payment_intents", ""), "one payment, however often the button is pressed")

	done, err := e.sc.V1CheckoutSessions.Retrieve(ctx, cs.ID, nil)
	require.NoError(t, err)
	require.Equal(t, stripe.CheckoutSessionStatusComplete, done.Status)
	require.Equal(t, stripe.CheckoutSessionPaymentStatusUnpaid, done.PaymentStatus, "manual capture: authorised, not paid")
	require.Empty(t, done.URL, "Stripe clears url once the session is no longer open")
	require.NotNil(t, done.PaymentIntent)
	pi, err := e.sc.V1PaymentIntents.Retrieve(ctx, done.PaymentIntent.ID, nil)
	require.NoError(t, err)
	require.Equal(t, stripe.PaymentIntentStatusRequiresCapture, pi.Status)
	require.Equal(t, stripe.PaymentIntentCaptureMethodManual, pi.CaptureMethod)
	require.Equal(t, "appointment:demo:1", pi.Metadata["booking_reference"])
	require.Equal(t, int64(5000), pi.AmountCapturable)

	completed := e.events(stripeapi.EventCheckoutCompleted)
	require.Len(t, completed, 1)
	var inEvent stripe.CheckoutSession
	require.NoError(t, json.Unmarshal(completed[0].Data.Raw, &inEvent))
	require.Equal(t, cs.ID, inEvent.ID)
	require.Equal(t, stripe.CheckoutSessionStatusComplete, inEvent.Status)
	require.Equal(t, pi.ID, inEvent.PaymentIntent.ID)
	require.Empty(t, completed[0].Request.ID, "the customer paid, not an API request")
	require.Len(t, e.events(stripeapi.EventAmountCapturableUpdated), 1)

	capture := &stripe.PaymentIntentCaptureParams{}
	capture.SetIdempotencyKey("k-capture-link")
	_, err = e.sc.V1PaymentIntents.Capture(ctx, pi.ID, capture)
	require.NoError(t, err)
	succeeded := e.events(stripeapi.EventIntentSucceeded)
	require.Len(t, succeeded, 1)
	require.Equal(t, "k-capture-link", succeeded[0].Request.IdempotencyKey)
	captured, err := e.sc.V1CheckoutSessions.Retrieve(ctx, cs.ID, nil)
	require.NoError(t, err)
	require.Equal(t, stripe.CheckoutSessionPaymentStatusPaid, captured.PaymentStatus)
}

// Each test card on the hosted page, paid by plain form posts.
func TestHostedPageTestCards(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		posts       []url.Values
		wantStatus  []int
		wantSession stripe.CheckoutSessionStatus
		wantIntent  string
		wantText    string
	}{
		{"visa authorises", []url.Values{{"payment_method": {"pm_card_visa"}}}, []int{200}, "complete", "requires_capture", "Vielen Dank"},
		{"declined stays open", []url.Values{{"payment_method": {"pm_card_chargeDeclined"}}}, []int{402}, "open", "requires_payment_method", "Your card was declined."},
		{"insufficient funds", []url.Values{{"payment_method": {"pm_card_chargeDeclinedInsufficientFunds"}}}, []int{402}, "open", "requires_payment_method", "insufficient funds"},
		{"declined, then another card", []url.Values{{"payment_method": {"pm_card_chargeDeclined"}}, {"payment_method": {"pm_card_visa"}}},
			[]int{402, 200}, "complete", "requires_capture", "Vielen Dank"},
		{"3-D Secure approved", []url.Values{{"payment_method": {"pm_card_authenticationRequired"}}, {"authentication": {"approve"}}},
			[]int{200, 200}, "complete", "requires_capture", "Vielen Dank"},
		{"3-D Secure denied", []url.Values{{"payment_method": {"pm_card_authenticationRequired"}}, {"authentication": {"deny"}}},
			[]int{200, 402}, "open", "requires_payment_method", "failed authentication"},
		{"approval without a challenge", []url.Values{{"authentication": {"approve"}}}, []int{400}, "open", "requires_payment_method", "no 3-D Secure challenge"},
		{"unknown card", []url.Values{{"payment_method": {"pm_card_nope"}}}, []int{400}, "open", "requires_payment_method", "unknown test card"},
	}
	e, _ := newClockEnv(t)
	ctx := context.Background()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := e.sc.V1CheckoutSessions.Create(ctx, sessionParams("k-card-"+strconv.Itoa(i), "appointment:demo:card-"+strconv.Itoa(i), time.Time{}))
			require.NoError(t, err)
			var last page
			for j, form := range tc.posts {
				last = e.payForm(cs.URL, form)
				require.Equal(t, tc.wantStatus[j], last.status, "post %d: %s", j, last.body)
			}
			require.Contains(t, last.body, tc.wantText)
			got, err := e.sc.V1CheckoutSessions.Retrieve(ctx, cs.ID, nil)
			require.NoError(t, err)
			require.Equal(t, tc.wantSession, got.Status)
			require.NotNil(t, got.PaymentIntent, "the first attempt creates the intent")
			status, _, _ := e.intentAmounts(got.PaymentIntent.ID)
			require.Equal(t, tc.wantIntent, status)
			require.Equal(t, 1, e.count("payment_intents", "id = $1", got.PaymentIntent.ID))
			wantCompleted := 0
			if tc.wantSession == stripe.CheckoutSessionStatusComplete {
				wantCompleted = 1
			}
			require.Equal(t, wantCompleted, e.count("events", "type = 'checkout.session.completed' AND object_id = $1", cs.ID))
		})
	}
}

// The English page formats amounts the English way.
func TestHostedPageEnglish(t *testing.T) {
	t.Parallel()
	e, _ := newClockEnv(t)
	p := sessionParams("k-en", "appointment:demo:en", time.Time{})
	p.Locale = stripe.String("en")
	p.LineItems[0].PriceData.UnitAmount = stripe.Int64(123456)
	cs, err := e.sc.V1CheckoutSessions.Create(context.Background(), p)
	require.NoError(t, err)
	shown := e.getPage(cs.URL)
	require.Equal(t, http.StatusOK, shown.status)
	require.Contains(t, shown.body, `lang="en"`)
	require.Contains(t, shown.body, "€1,234.56")
	require.Contains(t, shown.body, "Please pay by")
	require.Equal(t, http.StatusOK, e.getPage(cs.URL+"?locale=de").status)
	require.Contains(t, e.getPage(cs.URL+"?locale=de").body, "1.234,56\u00a0€")
	require.Equal(t, http.StatusNotFound, e.getPage(e.srv.URL+"/pay/cs_test_nope").status)
}

package channels_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// opsBrowser is a signed-in browser on the gateway's ops page: its
// session cookie and the page's CSRF token.
type opsBrowser struct {
	c    *http.Client
	base string
	csrf string
}

func (e cancelEnv) opsSignIn(t *testing.T) *opsBrowser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	b := &opsBrowser{base: e.admin, c: &http.Client{Jar: jar, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	res := testsupport.OpsSignIn(t, b.c, b.base, config.DefaultAPIToken)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	code, body, _ := b.do(t, http.MethodGet, "/ops", nil)
	require.Equal(t, http.StatusOK, code, body)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`).FindStringSubmatch(body)
	require.NotNil(t, m, "the page carries a CSRF token")
	b.csrf = m[1]
	return b
}

func (b *opsBrowser) do(t *testing.T, method, path string, form url.Values) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(data), res.Header
}

// opsForm is a booking button's form as the page rendered it.
type opsForm struct {
	action, token, row string
}

// bookingRow waits until the page lists the booking id (visibility lags)
// with a form posting to action ("cancel", "no-show"), and returns it.
func (b *opsBrowser) bookingRow(t *testing.T, id, action string) opsForm {
	t.Helper()
	rowRE := regexp.MustCompile(`(?s)<tr class="booking" data-id="` + regexp.QuoteMeta(id) + `">.*?</tr>`)
	formRE := regexp.MustCompile(`action="([^"]*/` + action + `)"><input type="hidden" name="csrf" value="[0-9a-f]+"><input type="hidden" name="token" value="([0-9a-f]{32})">`)
	var f opsForm
	testsupport.Eventually(t, 30*time.Second, "the ops page lists the booking with a "+action+" button", func() bool {
		code, body, _ := b.do(t, http.MethodGet, "/ops", nil)
		row := rowRE.FindString(body)
		m := formRE.FindStringSubmatch(row)
		if code != http.StatusOK || m == nil {
			return false
		}
		f = opsForm{action: html.UnescapeString(m[1]), token: m[2], row: row}
		return true
	})
	return f
}

// The tests of the bookings list do not run in parallel: the list shows
// every booking of the namespace in Temporal's visibility and asks each
// for its policy, and another test's booking (its worker on another
// queue) would not answer in time. Go runs them before the parallel
// tests, while the namespace holds few bookings.

// TestOpsPageCancelButtonActsOnce: the page shows, before the staff
// member confirms, that the deposit would be refunded; the Cancel form
// submitted twice at once (a double click) and once more afterwards
// cancels once: one refund at the payment API, one cancellation message
// at Twilio.
func TestOpsPageCancelButtonActsOnce(t *testing.T) {
	e := newCancelEnv(t)
	customer := newCustomer()
	id := e.book(t, customer)
	b := e.opsSignIn(t)
	f := b.bookingRow(t, id, "cancel")
	require.Contains(t, f.row, "deposit 20.00 EUR refunded in full", "the policy is shown before the cancel")
	require.Contains(t, f.row, "Cancel and refund 20.00 EUR")
	require.NotContains(t, f.row, customer, "the phone number is masked")
	require.Contains(t, f.row, "&#43;"+strings.TrimPrefix(mask.Phones(customer), "+"), "shown from CustomerMasked (html/template escapes the +)")
	require.NotContains(t, f.row, "/no-show", "no No-show before the slot")

	form := url.Values{"csrf": {b.csrf}, "token": {f.token}, "reason": {"customer called the desk"}}
	code, body, _ := b.do(t, http.MethodPost, f.action, url.Values{"token": {f.token}})
	require.Equal(t, http.StatusForbidden, code, "without the CSRF token: %s", body)

	// A double click: the form twice at once; then the same form again.
	codes, locations := make([]int, 3), make([]string, 3)
	post := func(i int) {
		req, err := http.NewRequest(http.MethodPost, b.base+f.action, strings.NewReader(form.Encode()))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if res, err := b.c.Do(req); err == nil {
			codes[i], locations[i] = res.StatusCode, res.Header.Get("Location")
			res.Body.Close()
		}
	}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { post(i) })
	}
	wg.Wait()
	post(2)
	require.Equal(t, []int{http.StatusSeeOther, http.StatusSeeOther, http.StatusSeeOther}, codes)
	code, body, _ = b.do(t, http.MethodGet, locations[2], nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "is Cancelled: cancelled at least 24h0m0s before the slot: deposit refunded in full", "the booking's own answer")

	ctx := context.Background()
	var refunds int
	var refunded int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(r.amount), 0) FROM refunds r
		JOIN payment_intents p ON p.id = r.payment_intent_id WHERE p.booking_reference = $1`, id).Scan(&refunds, &refunded))
	require.Equal(t, 1, refunds, "one refund at the payment API")
	require.Equal(t, int64(2000), refunded)
	require.Equal(t, 1, countOf(t, e, `SELECT count(*) FROM calendar_reservations WHERE reference = $1 AND status = 'cancelled'`, id))
	testsupport.Eventually(t, 60*time.Second, "the confirmation and the cancellation delivered", func() bool {
		var n, sent int
		err := e.pool.QueryRow(ctx, `SELECT count(*), count(provider_id) FROM outbox_messages WHERE reference = $1`, id).Scan(&n, &sent)
		return err == nil && n == 2 && sent == 2
	})
	stornos := 0
	for _, m := range e.twilio.Messages() {
		if strings.Contains(m.To, customer) && strings.Contains(m.Body, "ist storniert") {
			stornos++
		}
	}
	require.Equal(t, 1, stornos, "one cancellation message at Twilio")
}

// TestOpsPageNoShowButton: once the slot has begun the page offers
// No-show instead of Cancel; it marks the booking NoShow and keeps the
// deposit. Another tenant's booking is not found.
func TestOpsPageNoShowButton(t *testing.T) {
	e := newCancelEnv(t)
	customer := newCustomer()
	id := e.book(t, customer)
	e.slotBegun(t, id) // restarted with CustomerPhone, as before customer keys
	b := e.opsSignIn(t)
	f := b.bookingRow(t, id, "no-show")
	require.Contains(t, f.row, "&#43;"+strings.TrimPrefix(mask.Phones(customer), "+"), "a booking from before customer keys shows its CustomerPhone masked")
	require.NotContains(t, f.row, customer)
	require.NotContains(t, f.row, "/cancel", "no Cancel once the slot has begun")

	other := strings.Replace(f.action, "appointment:demo:", "appointment:other:", 1)
	code, body, _ := b.do(t, http.MethodPost, other, url.Values{"csrf": {b.csrf}, "token": {f.token}})
	require.Equal(t, http.StatusNotFound, code, body)

	code, body, h := b.do(t, http.MethodPost, f.action, url.Values{"csrf": {b.csrf}, "token": {f.token}, "note": {"did not come"}})
	require.Equal(t, http.StatusSeeOther, code, body)
	_, body, _ = b.do(t, http.MethodGet, h.Get("Location"), nil)
	require.Contains(t, body, "is NoShow: marked as a no-show: deposit kept (note: did not come)")
	require.Zero(t, countOf(t, e, `SELECT count(*) FROM refunds r JOIN payment_intents p ON p.id = r.payment_intent_id WHERE p.booking_reference = $1`, id))
	require.Equal(t, 1, countOf(t, e, `SELECT count(*) FROM calendar_reservations WHERE reference = $1 AND status = 'confirmed'`, id))
}

package testsupport

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/twilio"
)

// PayURL is a link to the payment API's hosted page in a message.
var PayURL = regexp.MustCompile(`https?://\S+/pay/cs_[A-Za-z0-9_]+`)

// PaymentLink waits until fake has accepted a message to customer (on
// any channel) that carries a payment link, and returns the link.
func PaymentLink(t testing.TB, fake *twilio.FakeServer, customer string) string {
	t.Helper()
	var link string
	Eventually(t, 60*time.Second, "the payment link at Twilio", func() bool {
		for _, m := range Accepted(fake, customer, "/pay/") {
			if link = PayURL.FindString(m.Body); link != "" {
				return true
			}
		}
		return false
	})
	return link
}

// PayLink pays link with the test card through the hosted page's form,
// as a customer's browser posts it.
func PayLink(ctx context.Context, t testing.TB, link string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, link, strings.NewReader(url.Values{"payment_method": {"pm_card_visa"}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the link was paid")
}

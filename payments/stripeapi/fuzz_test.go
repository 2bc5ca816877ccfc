package stripeapi_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/payments/stripeapi"
)

// FuzzParseForm feeds arbitrary bodies to the form parser: it must never
// panic, and whatever it accepts must respect Stripe's metadata limits and
// survive a round trip through standard form encoding.
func FuzzParseForm(f *testing.F) {
	f.Add("amount=5000&currency=eur&confirm=true&payment_method=pm_card_visa&metadata[booking_reference]=wf-1")
	f.Add("metadata%5Bstep%5D=deposit&expand%5B0%5D=latest_charge&expand[]=latest_charge")
	f.Add("amount=1&amount=2")
	f.Add("metadata[a][b]=c&[x]=1&a]=2&metadata[=3")
	f.Add("%zz=1&metadata[%ff]=%")
	f.Fuzz(func(t *testing.T, body string) {
		scalars, metadata, expand, err := stripeapi.ParseForm(body)
		_ = stripeapi.ParseSearch(body)
		if err != nil {
			return
		}
		require.LessOrEqual(t, len(metadata), 50)
		v := url.Values{}
		for k, val := range metadata {
			require.NotEmpty(t, k)
			require.LessOrEqual(t, len(k), 40)
			require.LessOrEqual(t, len(val), 500)
			v.Set("metadata["+k+"]", val)
		}
		for k, val := range scalars {
			v.Set(k, val)
		}
		for _, x := range expand {
			v.Add("expand[]", x)
		}
		s2, m2, e2, err := stripeapi.ParseForm(v.Encode())
		require.NoError(t, err, "re-encoded %q", v.Encode())
		require.Equal(t, len(scalars), len(s2))
		require.Equal(t, len(metadata), len(m2))
		require.Equal(t, len(expand), len(e2))
	})
}

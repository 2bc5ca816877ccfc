package mask_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/mask"
)

func TestPhones(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"german mobile", "+4915112345678", "+49·········78"},
		{"north american", "customer:t1:+12025550134", "customer:t1:+1········34"},
		{"whatsapp address", "whatsapp:+4915112345678", "whatsapp:+49·········78"},
		{"in a provider error", "The 'To' number +4915112345678 is not valid", "The 'To' number +49·········78 is not valid"},
		{"two numbers", "+4915112345678 and +4930123456", "+49·········78 and +49······56"},
		{"url-escaped in a query", "GET /v1/bookings?customer=%2B4915112345678", "GET /v1/bookings?customer=+49·········78"},
		{"no number", "appointment:demo:in_42", "appointment:demo:in_42"},
		{"already masked", "+49·········78", "+49·········78"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, mask.Phones(tc.in))
			require.Equal(t, tc.want, mask.Phones(mask.Phones(tc.in)), "masking is idempotent")
		})
	}
}

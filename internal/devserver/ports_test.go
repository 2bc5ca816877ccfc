package devserver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFreePortIsBelowTheEphemeralRange: the ports the server's services
// get are ones no outgoing connection takes in the meantime.
func TestFreePortIsBelowTheEphemeralRange(t *testing.T) {
	low, ok := ephemeralLow()
	if !ok {
		t.Skip("no /proc/sys/net/ipv4/ip_local_port_range: the kernel picks the port")
	}
	for range 20 {
		p, err := freePort("127.0.0.1")
		require.NoError(t, err)
		require.GreaterOrEqual(t, p, belowEphemeralFrom)
		require.Less(t, p, low, "below the ephemeral range %d-", low)
	}
}

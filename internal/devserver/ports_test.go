package devserver

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
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

// TestFreePortNeverRepeats: a port handed out is not handed out again,
// in this process or another, while the server it was meant for may
// still be about to bind it. Two draws of the same port used to make
// one server's membership listener fail, and ringpop panic.
func TestFreePortNeverRepeats(t *testing.T) {
	if _, ok := ephemeralLow(); !ok {
		t.Skip("no /proc/sys/net/ipv4/ip_local_port_range: the kernel picks the port")
	}
	seen := map[int]bool{}
	for range 2000 {
		p, err := freePort("127.0.0.1")
		require.NoError(t, err)
		require.False(t, seen[p], "port %d handed out twice", p)
		seen[p] = true
		require.False(t, claimPort(p), "port %d is claimed once handed out", p)
	}
	// Another process opens the same lock file: its lock is refused (a
	// second open file description conflicts just as another process's).
	for p := range seen {
		f, err := os.Open(filepath.Join(os.TempDir(), "bookonce-ports", strconv.Itoa(p)))
		require.NoError(t, err)
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		require.NoError(t, f.Close())
		require.ErrorIs(t, err, syscall.EWOULDBLOCK, "port %d is held against other processes", p)
		break
	}
}

// TestRestartOnAFileTakesItsPortsAgain: a server restarted on its data
// file gets the internal ports of its last start, so its membership table
// names only itself; when one of them is taken, or the record is
// unreadable, it gets fresh ones and remembers those.
func TestRestartOnAFileTakesItsPortsAgain(t *testing.T) {
	file := filepath.Join(t.TempDir(), "temporal.db")
	first, err := rememberedPorts(file, "127.0.0.1")
	require.NoError(t, err)
	require.Len(t, first, internalPortCount)

	again, err := rememberedPorts(file, "127.0.0.1")
	require.NoError(t, err)
	require.Equal(t, first, again, "a restart takes the same ports")

	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(first[3])))
	require.NoError(t, err)
	fresh, err := rememberedPorts(file, "127.0.0.1")
	require.NoError(t, l.Close())
	require.NoError(t, err)
	require.NotContains(t, fresh, first[3], "a taken port is not handed out")
	remembered, ok := readPorts(PortsFile(file))
	require.True(t, ok)
	require.Equal(t, fresh, remembered, "the fresh ports are remembered")

	for _, bad := range []string{"", "{", `{"internal":[1,2,3]}`, `{"internal":[0,1,2,3,4,5,6]}`} {
		require.NoError(t, os.WriteFile(PortsFile(file), []byte(bad), 0o644))
		got, err := rememberedPorts(file, "127.0.0.1")
		require.NoError(t, err, "record %q", bad)
		require.Len(t, got, internalPortCount, "record %q", bad)
	}
}

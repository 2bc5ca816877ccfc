package devserver

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// freePort finds a port on host that the server can bind a moment later
// (see ListenFree).
func freePort(host string) (int, error) {
	l, err := ListenFree(host)
	if err != nil {
		return 0, err
	}
	return l.Addr().(*net.TCPAddr).Port, l.Close()
}

// ListenFree listens on a free port of host that is safe to close and
// bind again later: a server restarted on it, or started on it a moment
// after this probe. A port the kernel hands out for port 0 comes from the
// ephemeral range, which is also where every outgoing connection takes
// its local port: in the gap before the server's own listen, a
// connection can take it (Temporal's membership listener then fails
// where its error is only logged: a nil listener, a panic inside
// ringpop). So the port is drawn below the ephemeral range, where nothing
// takes a port without asking for it by number; where that range is
// unknown (not Linux), the kernel picks.
func ListenFree(host string) (net.Listener, error) {
	if low, ok := ephemeralLow(); ok && low > belowEphemeralFrom+1 {
		for range 64 {
			p := belowEphemeralFrom + rand.IntN(low-belowEphemeralFrom)
			if l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p))); err == nil {
				return l, nil
			}
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("find a free port: %w", err)
	}
	return l, nil
}

// belowEphemeralFrom is the lowest port freePort draws: above the ports
// services are usually configured on.
const belowEphemeralFrom = 20000

// ephemeralLow is the first port of Linux's ephemeral range.
func ephemeralLow() (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(fields[0])
	return low, err == nil
}

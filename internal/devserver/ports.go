package devserver

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
// after this probe. Temporal binds its membership ports only while it
// assembles itself, and a listen error there is only logged (a nil
// listener, a panic inside ringpop), so nothing else may take the port in
// that gap:
//   - a port the kernel hands out for port 0 comes from the ephemeral
//     range, where every outgoing connection also takes its local port,
//     so the port is drawn below that range;
//   - a random draw can repeat, in this process or in another test binary
//     running beside it, so a port once handed out stays claimed for the
//     life of the process: in a set here, and across processes by a lock
//     on a file named after it (claimPort).
//
// Where the ephemeral range is unknown (not Linux), the kernel picks.
func ListenFree(host string) (net.Listener, error) {
	if low, ok := ephemeralLow(); ok && low > belowEphemeralFrom+1 {
		for range 256 {
			p := belowEphemeralFrom + rand.IntN(low-belowEphemeralFrom)
			if !claimPort(p) {
				continue
			}
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

// claims are the ports this process has handed out, each with the open
// file whose lock keeps other processes from handing it out too.
var claims = struct {
	sync.Mutex
	ports map[int]*os.File
}{ports: map[int]*os.File{}}

// claimPort claims p for this process, or reports that it is already
// claimed here or by another process. The lock is released by the kernel
// when the process ends, however it ends.
func claimPort(p int) bool {
	claims.Lock()
	defer claims.Unlock()
	if _, taken := claims.ports[p]; taken {
		return false
	}
	dir := filepath.Join(os.TempDir(), "bookonce-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return false
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		// Another process holds it; the file only names the lock.
		f.Close()
		return false
	}
	claims.ports[p] = f
	return true
}

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

package testsupport

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// ClientFrom is an HTTP client whose connections come from the loopback
// address ip (any of 127.0.0.0/8 on Linux), so a test can be two clients
// at two addresses against one real server. Every request opens a new
// connection, from a new port, and redirects are not followed.
func ClientFrom(t testing.TB, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

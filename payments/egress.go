package payments

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// errPrivateAddress refuses a tenant's webhook endpoint that resolves to
// an address on this side of the internet.
var errPrivateAddress = errors.New("webhook endpoint resolves to a private, loopback, link-local or unspecified address: refused")

// publicClient is the client of tenants' webhook endpoints. A tenant
// chooses the URL, so it must not reach what the payment API can reach
// and the tenant cannot (cloud metadata at 169.254.169.254, loopback
// services, cluster addresses, the Temporal frontend): the dialer refuses
// every address that is not public at connect time, after resolution, so
// a DNS name that resolves (or rebinds) to one is refused too. Redirects
// are not followed (a 3xx is a failed delivery, as at Stripe), and no
// proxy from the environment is used (the check would see the proxy).
func publicClient(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: refusePrivate}
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
			TLSHandshakeTimeout: timeout, MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute,
		},
	}
}

// refusePrivate is a dialer Control: it sees the address actually dialled.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("webhook endpoint address %q: %w", address, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("webhook endpoint address %q: %w", address, err)
	}
	if !Public(ip) {
		return fmt.Errorf("%w (%s)", errPrivateAddress, ip)
	}
	return nil
}

// sharedAddressSpace is 100.64.0.0/10 (RFC 6598, carrier-grade NAT and
// many clusters' pod networks).
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// Public reports whether ip is an address on the internet: not loopback,
// private (RFC 1918, fc00::/7), shared (RFC 6598), link-local,
// multicast or unspecified.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && !ip.IsLoopback() && !ip.IsPrivate() && !ip.IsLinkLocalUnicast() &&
		!ip.IsLinkLocalMulticast() && !ip.IsInterfaceLocalMulticast() && !ip.IsMulticast() &&
		!ip.IsUnspecified() && !sharedAddressSpace.Contains(ip) && !(ip.Is4() && ip.As4()[0] == 0)
}

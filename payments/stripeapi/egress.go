package stripeapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
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
// With loopback, this machine's loopback addresses are admitted too (for
// development: make run's endpoints are on this machine).
func publicClient(timeout time.Duration, loopback bool) *http.Client {
	control := refusePrivate
	if loopback {
		control = refusePrivateButLoopback
	}
	dialer := &net.Dialer{Timeout: timeout, Control: control}
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
			TLSHandshakeTimeout: timeout, MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute,
		},
	}
}

// publicHost reports whether host, the host of a new endpoint's URL, may
// be public, as Stripe checks at creation: an address literal must be
// Public (or, with loopback, this machine's loopback), and localhost
// names count as loopback. Any other name passes here: what it resolves
// to is checked when a delivery connects (publicClient), where a name
// that resolves, or later rebinds, to a private address is refused.
func publicHost(host string, loopback bool) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return loopback
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return true
	}
	return Public(ip) || (loopback && ip.Unmap().IsLoopback())
}

// refusePrivate is a dialer Control: it sees the address actually dialled.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	return refuseUnless(address, Public)
}

// refusePrivateButLoopback is refusePrivate that admits loopback.
func refusePrivateButLoopback(_, address string, _ syscall.RawConn) error {
	return refuseUnless(address, func(ip netip.Addr) bool { return Public(ip) || ip.Unmap().IsLoopback() })
}

func refuseUnless(address string, allowed func(netip.Addr) bool) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("webhook endpoint address %q: %w", address, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("webhook endpoint address %q: %w", address, err)
	}
	if !allowed(ip) {
		return fmt.Errorf("%w (%s)", errPrivateAddress, ip)
	}
	return nil
}

// notGlobal are the special-purpose blocks of the IANA IPv4 and IPv6
// Special-Purpose Address Registries that are not globally reachable, or
// that translate to addresses which may be internal (NAT64, 6to4), beyond
// what package netip names (loopback, RFC 1918 and fc00::/7, link-local,
// multicast, unspecified).
var notGlobal = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // shared address space (RFC 6598): carrier-grade NAT, pod networks
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation (TEST-NET-1)
		"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation (TEST-NET-2)
		"203.0.113.0/24",  // documentation (TEST-NET-3)
		"240.0.0.0/4",     // reserved, and the limited broadcast
		"64:ff9b::/96",    // NAT64: maps onto any IPv4 address
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard-only
		"2001::/23",       // IETF protocol assignments (Teredo and others)
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4: embeds any IPv4 address
		"3fff::/20",       // documentation
		"5f00::/16",       // SRv6 SIDs
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

// Public reports whether ip is an address on the internet: not loopback,
// private (RFC 1918, fc00::/7), link-local, multicast or unspecified, nor
// in a block of the IANA special-purpose registries that is not globally
// reachable (notGlobal).
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range notGlobal {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

package shopcal

import (
	"bytes"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"
)

// pusher is how the fakes deliver push notifications as the providers
// do: asynchronously, each on its own, within the provider's timeout,
// retried with backoff when the receiver fails (retry decides which
// statuses it retries).
type pusher struct {
	timeout   time.Duration
	attempts  int
	retry     func(status int) bool
	delivered atomic.Int64
}

func (p *pusher) deliver(address string, header http.Header, body []byte) {
	go func() {
		hc := &http.Client{Timeout: p.timeout}
		wait := 100 * time.Millisecond
		for range p.attempts {
			req, err := http.NewRequest(http.MethodPost, address, bytes.NewReader(body))
			if err != nil {
				return
			}
			req.Header = header.Clone()
			resp, err := hc.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode < 300 {
					p.delivered.Add(1)
				}
				if !p.retry(resp.StatusCode) {
					return
				}
			}
			time.Sleep(wait) // the provider's backoff, in the fake's goroutine
			wait *= 2
		}
	}()
}

// pushAddress is the providers' rule for a notification URL: HTTPS. The
// fakes also take plain HTTP to a loopback address, where tests and the
// drill run the gateway.
func pushAddress(address string) bool {
	u, err := url.Parse(address)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return u.Scheme == "http" && (u.Hostname() == "localhost" || ip != nil && ip.IsLoopback())
}

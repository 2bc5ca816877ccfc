package stripeapi_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"

	"github.com/bookonce/bookonce/payments/stripeapi"
)

// blackHole is a webhook receiver on loopback that accepts connections
// and never answers: every delivery to it waits for the deliverer's
// timeout. It counts the connections it holds.
type blackHole struct {
	ln         net.Listener
	open, peak atomic.Int64
	accepted   atomic.Int64
}

func newBlackHole(t *testing.T) *blackHole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := &blackHole{ln: ln}
	go h.serve()
	t.Cleanup(func() { require.NoError(t, ln.Close()) })
	return h
}

// url is an endpoint on the hole; path tells the endpoints apart.
func (h *blackHole) url(path string) string { return "http://" + h.ln.Addr().String() + "/" + path }

func (h *blackHole) serve() {
	for {
		conn, err := h.ln.Accept()
		if err != nil {
			return // closed by the test's cleanup
		}
		go h.hold(conn)
	}
}

// hold reads whatever comes until the client gives up and closes.
func (h *blackHole) hold(conn net.Conn) {
	defer conn.Close()
	h.accepted.Add(1)
	n := h.open.Add(1)
	defer h.open.Add(-1)
	for {
		p := h.peak.Load()
		if n <= p || h.peak.CompareAndSwap(p, n) {
			break
		}
	}
	buf := make([]byte, 4096)
	for {
		if _, err := conn.Read(buf); err != nil {
			return
		}
	}
}

// deliveries is how many requests the receiver got.
func (rc *receiver) deliveries() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.bodies)
}

// lockedBuffer is a log destination for concurrent deliveries.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// pay creates a payment link as sc's tenant and pays it: its events are
// payment_intent.amount_capturable_updated and checkout.session.completed.
func (e *env) pay(sc *stripe.Client, key, ref string) {
	e.t.Helper()
	cs, err := sc.V1CheckoutSessions.Create(context.Background(), sessionParams(key, ref, time.Time{}))
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, e.payForm(cs.URL, url.Values{"payment_method": {"pm_card_visa"}}).status)
}

// run runs d's loops every 20 ms until the test ends.
func run(t *testing.T, d *stripeapi.Deliverer) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx, 20*time.Millisecond) }()
	t.Cleanup(func() { stop(); <-done })
}

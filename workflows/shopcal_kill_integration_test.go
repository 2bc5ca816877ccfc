package workflows_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/shopcal"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// commitThenHang is a proxy in front of a provider that lets the first
// create of an event through to the provider (which stores it) and then
// never answers: the worker that sent it dies waiting.
type commitThenHang struct {
	mu        sync.Mutex
	held      bool
	after     int // requests passed on after the held one: the retry's
	committed chan struct{}
}

func (h *commitThenHang) wrap(t *testing.T) func(base string) string {
	return func(base string) string {
		target, err := url.Parse(base)
		require.NoError(t, err)
		proxy := httputil.NewSingleHostReverseProxy(target)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !h.first(r) {
				proxy.ServeHTTP(w, r)
				return
			}
			out := r.Clone(context.WithoutCancel(r.Context()))
			out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = target.Scheme, target.Host, target.Host, ""
			resp, err := http.DefaultTransport.RoundTrip(out)
			if err == nil {
				resp.Body.Close()
			}
			close(h.committed)
			<-r.Context().Done() // the worker is gone
			panic(http.ErrAbortHandler)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

// first reports whether r is the first create of an event: a POST to the
// events (Google, Graph; not the token endpoint's) or a PUT only if none
// exists (CalDAV).
func (h *commitThenHang) first(r *http.Request) bool {
	create := (r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/events")) ||
		(r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held {
		h.after++
	}
	if !create || h.held {
		return false
	}
	h.held = true
	return true
}

// TestWorkerKilledAfterTheProviderCommittedLeavesOneEvent: the provider
// stored the booking's event and the worker stopped before the answer came
// back (to the provider, a crash: the request was never answered).
// Another worker retries the activity under the same event ID: it finds
// the event the first attempt made, and the shop's calendar holds it
// once, at every provider.
func TestWorkerKilledAfterTheProviderCommittedLeavesOneEvent(t *testing.T) {
	t.Parallel()
	eachProvider(t, func(t *testing.T, s *convStack, cals shopCalendars) {
		hang := &commitThenHang{committed: make(chan struct{})}
		cals.route(t, s, hang.wrap(t))
		kill := s.worker(t)
		fake, customer := fakeTwilio(t, *s), conversationCustomer()
		s.say(t, conversationInput(customer, 0), "SMbook", "Reifenwechsel "+slotText(t, 16))
		select {
		case <-hang.committed:
		case <-time.After(90 * time.Second):
			t.Fatal("the event's create never reached the provider")
		}
		var reference string
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT reference FROM calendar_reservations
			WHERE customer = $1 AND status = 'confirmed'`, customer).Scan(&reference))
		id := shopcal.EventID("demo", reference)
		require.Equal(t, 1, cals.copies(t, id), "the provider stored it")
		kill()

		s.worker(t)
		s.idle(t, lifecycle.WorkflowID(reference), "")
		hang.mu.Lock()
		require.Positive(t, hang.after, "the retry asked the provider again")
		hang.mu.Unlock()
		require.Equal(t, 1, cals.copies(t, id), "one event after the retry")
		require.Equal(t, 1, messagesTo(fake, customer, "bestätigt"), "the customer was confirmed once")
		require.Zero(t, s.count(t, `SELECT count(*) FROM review_cases`), "nothing for a person")
	})
}

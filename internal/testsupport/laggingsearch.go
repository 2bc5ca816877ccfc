package testsupport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// LaggingSearch is a payment provider double in front of our payment API
// that behaves like Stripe where it matters for reconciliation: its search
// index lags writes. The first Lag searches answer an empty search result
// (Stripe's wire format) whatever exists; later ones are forwarded. The
// first DropCreates authorisations (POST /v1/payment_intents) are committed
// upstream and their answers lost. It records the Idempotency-Key of every
// authorisation it saw.
type LaggingSearch struct {
	URL      string
	upstream string
	mu       sync.Mutex
	lag      int
	drop     int
	keys     []string
	searches int
}

// NewLaggingSearch starts the double on loopback: lag searches answer
// nothing, dropCreates authorisations lose their answer.
func NewLaggingSearch(t testing.TB, upstream string, lag, dropCreates int) *LaggingSearch {
	l := &LaggingSearch{upstream: strings.TrimRight(upstream, "/"), lag: lag, drop: dropCreates}
	srv := httptest.NewServer(http.HandlerFunc(l.serve))
	t.Cleanup(srv.Close)
	l.URL = srv.URL
	return l
}

// AuthorisationKeys are the Idempotency-Keys of the authorisations seen,
// in order.
func (l *LaggingSearch) AuthorisationKeys() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.keys...)
}

// Searches is how many searches arrived (lagging or not).
func (l *LaggingSearch) Searches() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.searches
}

// emptySearch is Stripe's search envelope with no hits.
const emptySearch = `{"object":"search_result","data":[],"has_more":false,"next_page":null,"url":"/v1/payment_intents/search"}`

func (l *LaggingSearch) serve(w http.ResponseWriter, r *http.Request) {
	search := r.Method == http.MethodGet && r.URL.Path == "/v1/payment_intents/search"
	create := r.Method == http.MethodPost && r.URL.Path == "/v1/payment_intents"
	l.mu.Lock()
	lagging, drop := false, false
	if search {
		l.searches++
		lagging = l.searches <= l.lag
	}
	if create {
		l.keys = append(l.keys, r.Header.Get("Idempotency-Key"))
		drop = len(l.keys) <= l.drop
	}
	l.mu.Unlock()
	if lagging {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Request-Id", "req_lagging_search")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(emptySearch))
		return
	}
	status, header, body, err := forward(r, l.upstream)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if drop {
		hangUp(w)
		return
	}
	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

package stripeapi

import "sync"

// Concurrency defaults of the Deliverer.
const (
	// DefaultMaxInFlight bounds the deliveries in flight at once.
	DefaultMaxInFlight = 64
	// DefaultPerTenant bounds the deliveries in flight of one share: a
	// tenant's own endpoints, or the operator's configured endpoint for
	// that tenant. A tenant's endpoints that never answer occupy at most
	// this many slots, each for at most the delivery timeout, however
	// many of them and their events there are.
	DefaultPerTenant = 4
)

// shares counts the deliveries in flight per share ("tenant:<id>" for a
// tenant's own endpoints, "operator:<id>" for the operator's endpoint for
// that tenant, so a tenant's broken endpoints do not delay the gateway's
// news of its bookings either; claimSQL names them). Only the dispatching
// goroutine takes slots (after a claim that asked for no more than were
// free); the delivering goroutines give them back.
type shares struct {
	mu       sync.Mutex
	inFlight map[string]int
	total    int
	// freed wakes the dispatcher when a slot is given back, so a backlog
	// is worked through at the share's pace, not one claim per interval.
	freed chan struct{}
}

func newShares() *shares {
	return &shares{inFlight: map[string]int{}, freed: make(chan struct{}, 1)}
}

// busy lists the shares with deliveries in flight, for the claim query,
// and how many are in flight in all.
func (s *shares) busy() (names []string, counts []int32, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, n := range s.inFlight {
		names, counts = append(names, name), append(counts, int32(n))
	}
	return names, counts, s.total
}

func (s *shares) take(share string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight[share]++
	s.total++
}

func (s *shares) release(share string) {
	s.mu.Lock()
	if s.inFlight[share]--; s.inFlight[share] <= 0 {
		delete(s.inFlight, share)
	}
	s.total--
	s.mu.Unlock()
	select {
	case s.freed <- struct{}{}:
	default: // a wake-up is pending already
	}
}

package drill

import (
	"context"
	"sync/atomic"
	"time"
)

// dbGate is shut while the PostgreSQL outage keeps the database down.
// Customers and their agents send nothing meanwhile: Twilio does not
// retry a refused message for minutes, so a WhatsApp message sent into a
// two-minute outage is refused (503, nothing recorded) and the customer
// writes again later; the drill plays that "later" by holding its posts
// until the database is back, and counts them (Held). Confirmations,
// links and reminders that fall due meanwhile are what the outage tests.
type dbGate struct {
	down atomic.Bool
	held atomic.Int64
}

// wait returns once the database is up (at once when it is), or when ctx
// ends.
func (g *dbGate) wait(ctx context.Context) {
	if g == nil || !g.down.Load() {
		return
	}
	g.held.Add(1)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for g.down.Load() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

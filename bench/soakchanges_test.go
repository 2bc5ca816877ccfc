package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// While new bookings run, customers also cancel and move the bookings
// the soak opened, as the staff's tools do: through the gateway's
// bearer-token booking API on its staff surface (ADMIN_LISTEN; POST
// /v1/appointments/{id}/cancel and /reschedule), each answered once the
// lifecycle's Update has refunded or moved it.

// soakMoveResource takes the moved bookings: a bay of its own, so that a
// move's slot is free at every level.
const soakMoveResource = "soak-move"

// changeOp is the i-th change of the run (from base on): even ones
// cancel, odd ones move, each a seeded booking of its own (the newest
// open ones: a level's changes are fewer than the bookings it seeded, so
// none is changed twice), the moves to the i-th slot of the move bay.
func (e soakEnv) changeOp(open, base int) Op {
	return func(ctx context.Context, i int) error {
		b, err := e.seed.booking(open - 1 - (i - base))
		if err != nil {
			return err
		}
		if i%2 == 0 {
			return e.change(ctx, b.in.Reference, channels.RouteCancelAppointment, fmt.Sprintf("soak-cancel-%d", i),
				map[string]any{"reason": "soak"}, workflows.StatusCancelled)
		}
		_, start := soakSlot(e.cfg.Timezone, e.seed.today, i, 1)
		return e.change(ctx, b.in.Reference, channels.RouteRescheduleAppointment, fmt.Sprintf("soak-move-%d", i),
			map[string]any{"start": start.Format(time.RFC3339), "resource_id": soakMoveResource}, workflows.StatusConfirmed)
	}
}

// change posts one change of the appointment ref and requires the
// booking's status afterwards to be want.
func (e soakEnv) change(ctx context.Context, ref, route, key string, body any, want workflows.BookingStatus) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, pattern, _ := strings.Cut(route, " ")
	target := e.staffURL + strings.Replace(pattern, "{id}", url.PathEscape(ref), 1)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+config.DefaultAPIToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := e.sim.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", route, ref, resp.StatusCode, answer)
	}
	var st lifecycle.State
	if err := json.Unmarshal(answer, &st); err != nil {
		return fmt.Errorf("%s %s: %w", route, ref, err)
	}
	if st.Status != want {
		return fmt.Errorf("%s %s: %s, want %s (%s)", route, ref, st.Status, want, st.Reason)
	}
	return nil
}

// A reminder is a lifecycle woken by its timer: it writes the reminder
// to the outbox (and the sender delivers it). Seeded bookings are days
// ahead, so during the load a few bookings are opened, as the seeding
// opens them, whose one reminder is due remindIn after they start.
const (
	remindIn = 15 * time.Second
	// remindWithin bounds the wait for a reminder's row: a lifecycle whose
	// first task starts after the reminder fell due skips it (the
	// confirmation has just said the same), and the soak reports that as
	// a reminder not sent instead of waiting for it forever.
	remindWithin = remindIn + 2*time.Minute
	// remindSeq numbers the reminded bookings' customers apart from the
	// seeded ones and the new bookings'.
	remindSeq = 10_000_000
)

// remindOp opens the i-th reminded booking on the move bay's last days
// (the moves take its first) and waits for its reminder's outbox row.
// Its shop keeps no quiet hours: a reminder due inside them would wait
// for the morning, and the run's outcome would depend on the hour.
func (e soakEnv) remindOp() Op {
	return func(ctx context.Context, i int) error {
		ctx, cancel := context.WithTimeout(ctx, remindWithin)
		defer cancel()
		_, start := soakSlot(e.cfg.Timezone, e.seed.today, soakSlotsPerDay*soakDays-1-i, 1)
		b, err := e.seed.bookingAt(remindSeq+i, soakMoveResource, start)
		if err != nil {
			return err
		}
		terms := *b.in.Terms
		terms.QuietOpens, terms.QuietCloses = "", ""
		b.in.Terms = &terms
		b.in.Reminders = []workflows.Duration{workflows.Duration(time.Until(start) - remindIn)}
		b.in.Tuning.ReminderLead = workflows.Duration(time.Second)
		if err := e.seed.open(ctx, b); err != nil {
			return err
		}
		for {
			var n int
			if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM outbox_messages WHERE reference = $1 AND kind LIKE $2`,
				b.in.Reference, lifecycle.MessageKindReminder+"%").Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("no reminder for %s: %w", b.in.Reference, ctx.Err())
			case <-time.After(time.Second):
			}
		}
	}
}

package drill

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/twilio"
)

// A share of customers write STOPP right after their wish (Scenario.Stop):
// the booking goes on (its link and confirmation answer what they asked
// for), but from the moment bookonce recorded the opt-out no reminder may
// reach them, on any channel. Their reminders are then held back
// ('suppressed'), which the reminder check counts as right for them alone.

// stopWord is what they write: one of the German default keywords.
const stopWord = "STOPP"

// stopSlack is how long after bookonce recorded an opt-out a reminder may
// still appear at Twilio: one the relay claimed a moment before.
const stopSlack = 2 * time.Second

// OptOuts is what the drill's STOP customers were sent.
type OptOuts struct {
	// Customers wrote STOPP; Recorded of them have an opt-out in the
	// consent trail.
	Customers int `json:"customers"`
	Recorded  int `json:"recorded"`
	// Suppressed are their reminders held back; ToOptedOut reminders that
	// reached one of them after the opt-out was recorded (must be 0).
	Suppressed int      `json:"reminders_suppressed"`
	ToOptedOut int      `json:"reminders_after_stop"`
	Examples   []string `json:"examples,omitempty"`
}

// optOuts checks the STOP customers against the consent trail and the
// messages at Twilio.
func (e *env) optOuts(ctx context.Context, all []Scenario, msgs []twilio.FakeMessage) (OptOuts, error) {
	var o OptOuts
	keys := e.cfg.CustomerKeys()
	for _, s := range all {
		if !s.Stop {
			continue
		}
		o.Customers++
		key, err := keys.Key(s.tenant(), s.Customer)
		if err != nil {
			return o, err
		}
		var at *time.Time
		if err := e.pool.QueryRow(ctx, `SELECT min(recorded_at) FROM consent_events
			WHERE tenant_id = $1 AND customer_key = $2 AND action = 'opt_out'`, s.tenant(), string(key)).Scan(&at); err != nil {
			return o, fmt.Errorf("opt-outs: %w", err)
		}
		if at == nil {
			o.Examples = append(o.Examples, "no opt-out recorded for "+mask.Phones(s.Customer))
			continue
		}
		o.Recorded++
		for _, m := range msgs {
			if strings.TrimPrefix(m.To, "whatsapp:") == s.Customer && strings.HasPrefix(m.Body, "Erinnerung") && m.DateCreated.After(at.Add(stopSlack)) {
				o.ToOptedOut++
				o.Examples = append(o.Examples, fmt.Sprintf("reminder to %s at %s, opted out at %s", mask.Phones(s.Customer), m.DateCreated.Format(time.TimeOnly), at.UTC().Format(time.TimeOnly)))
			}
		}
	}
	err := e.pool.QueryRow(ctx, `SELECT count(*) FROM outbox_messages WHERE state = 'suppressed'`).Scan(&o.Suppressed)
	return o, err
}

// failures are the opt-out checks that fail the drill.
func (o OptOuts) failures() []string {
	var out []string
	if o.Recorded < o.Customers {
		out = append(out, fmt.Sprintf("%d of %d STOP customers have no opt-out recorded: %v", o.Customers-o.Recorded, o.Customers, o.Examples))
	}
	if o.ToOptedOut > 0 {
		out = append(out, fmt.Sprintf("%d reminders reached customers after they wrote STOP: %v", o.ToOptedOut, o.Examples))
	}
	return out
}

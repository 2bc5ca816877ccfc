package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// The soak's seeding opens confirmed bookings fast: each one's calendar
// reservation and captured deposit made through the real APIs, as the
// appointment makes them, and its BookingWorkflow started as the
// appointment starts it (same input, same ID scheme, same search
// attributes), without the conversation and the saga in front. The
// measured load then runs on top of thousands of open lifecycles.

// soakSlotsPerDay: the soak's resources are open 08:00-18:00 every day,
// twenty half-hour tire changes each.
const soakSlotsPerDay = 20

// soakDays spreads the seeded bookings over the next eight weeks, from
// the day after tomorrow on (no reminder is due while the soak runs).
const soakDays = 56

// soakResources is how many resources n bookings need over soakDays.
func soakResources(n int) int {
	per := soakSlotsPerDay * soakDays
	return (n + per - 1) / per
}

// seedSoakResources adds the resources n seeded bookings need to the
// demo shop, open every day, and the bay the soak's moves go to.
func seedSoakResources(ctx context.Context, pool *pgxpool.Pool, n int) error {
	_, err := pool.Exec(ctx, `INSERT INTO calendar_resources (tenant_id, id, name, kind, opens_at, closes_at, weekdays)
		SELECT $1, 'soak-' || lpad(g::text, 3, '0'), 'Soak ' || g, 'bay', '08:00', '18:00', '{1,2,3,4,5,6,7}'
		FROM generate_series(0, $2 - 1) g`, tenant, soakResources(n))
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `INSERT INTO calendar_resources (tenant_id, id, name, kind, opens_at, closes_at, weekdays)
		VALUES ($1, $2, 'Soak moves', 'bay', '08:00', '18:00', '{1,2,3,4,5,6,7}')`, tenant, soakMoveResource)
	return err
}

// soakSlot is the seq-th seeded booking's resource and start: resources
// fill a day's slots side by side, days one after another.
func soakSlot(tz *time.Location, today time.Time, seq, resources int) (string, time.Time) {
	res := seq % resources
	j := seq / resources
	day, n := j/soakSlotsPerDay, j%soakSlotsPerDay
	start := time.Date(today.Year(), today.Month(), today.Day()+2+day, 8, 0, 0, 0, tz).Add(time.Duration(n) * 30 * time.Minute)
	return fmt.Sprintf("soak-%03d", res), start
}

// seeder opens confirmed bookings of the demo shop.
type seeder struct {
	cfg       config.Config
	tc        client.Client
	acts      *activities.Activities
	profile   *tenants.Profile
	resources int
	base      int // customers are phone(base, seq)
	today     time.Time
}

func newSeeder(cfg config.Config, pool *pgxpool.Pool, reg *tenants.Registry, tc client.Client, n, base int) (*seeder, error) {
	p, ok := reg.Get(tenant)
	if !ok {
		return nil, fmt.Errorf("tenant %q not configured", tenant)
	}
	return &seeder{cfg: cfg, tc: tc, acts: stack.NewActivities(cfg, pool, reg, tc), profile: p,
		resources: soakResources(n), base: base, today: time.Now().In(cfg.Timezone)}, nil
}

// op is one seeded booking: hold and confirm, authorise and capture (the
// two side by side, as neither waits for the other's answer here), then
// the lifecycle's start.
func (s *seeder) op() Op {
	return func(ctx context.Context, seq int) error {
		b, err := s.booking(seq)
		if err != nil {
			return err
		}
		return s.open(ctx, b)
	}
}

// open makes b a confirmed booking with its lifecycle running.
func (s *seeder) open(ctx context.Context, b seeded) error {
	g, gctx := errgroup.WithContext(ctx)
	var booking calendar.Booking
	var intentID string
	g.Go(func() (err error) { booking, err = s.reserve(gctx, b); return err })
	g.Go(func() (err error) { intentID, err = s.capture(gctx, b); return err })
	if err := g.Wait(); err != nil {
		return fmt.Errorf("booking %s: %w", b.in.Reference, err)
	}
	b.in.BookingID, b.in.SlotEnd, b.in.IntentID = booking.ID, booking.End, intentID
	return s.start(ctx, b)
}

// seeded is one booking to seed: the lifecycle's input so far and the
// customer's key.
type seeded struct {
	in  lifecycle.Input
	key customerid.Key
}

// booking is the seq-th booking's lifecycle input as an appointment of a
// WhatsApp wish with a card deposit leaves it, before the IDs the APIs
// give.
func (s *seeder) booking(seq int) (seeded, error) {
	res, start := soakSlot(s.cfg.Timezone, s.today, seq, s.resources)
	return s.bookingAt(seq, res, start)
}

// bookingAt is the seq-th customer's booking of resource res at start.
func (s *seeder) bookingAt(seq int, res string, start time.Time) (seeded, error) {
	customer := phone(s.base, seq)
	key, err := s.cfg.CustomerKeys().Key(tenant, customer)
	if err != nil {
		return seeded{}, err
	}
	intentID, err := workflows.IntentID(tenant, key, intent.ServiceTireChange, "", start)
	if err != nil {
		return seeded{}, err
	}
	terms := s.profile.Terms()
	terms.ReminderLead, terms.DecisionTimeout = s.cfg.ReminderLead, s.cfg.PaymentDecisionTimeout
	deposit, _ := s.profile.Deposit(intent.ServiceTireChange)
	in := lifecycle.Input{
		Tenant: tenant, Reference: appointment.WorkflowID(tenant, intentID), Customer: customer, Service: intent.ServiceTireChange,
		Channel: workflows.ChannelWhatsApp, ResourceID: res, SlotStart: start, Timezone: s.cfg.Timezone.String(), Terms: terms,
		Currency: deposit.Currency, Deposit: deposit.Amount, CancellationWindow: terms.CancellationWindow, Reminders: terms.Reminders,
	}
	in.Tuning.ReminderLead = terms.ReminderLead
	return seeded{in: in, key: key}, nil
}

// reserve holds the slot and confirms it under keys derived from the
// reference, as the appointment's activities do.
func (s *seeder) reserve(ctx context.Context, b seeded) (calendar.Booking, error) {
	cal, err := s.acts.Calendar(tenant)
	if err != nil {
		return calendar.Booking{}, err
	}
	h, err := cal.CreateHold(ctx, soakKey(b, "hold"), calendar.HoldRequest{ResourceID: b.in.ResourceID, Service: b.in.Service,
		Start: b.in.SlotStart, Customer: b.in.Customer, Reference: b.in.Reference})
	if err != nil {
		return calendar.Booking{}, err
	}
	return cal.ConfirmHold(ctx, soakKey(b, "confirm"), h.ID)
}

// capture authorises the deposit and captures it.
func (s *seeder) capture(ctx context.Context, b seeded) (string, error) {
	pay, err := s.acts.Payments(tenant)
	if err != nil {
		return "", err
	}
	pi, err := pay.Authorize(ctx, soakKey(b, "authorize"), payments.Authorization{Amount: b.in.Deposit, Currency: b.in.Currency,
		Reference: b.in.Reference, Step: activities.DepositStep, PaymentMethod: stack.ConversationCard})
	if err != nil {
		return "", err
	}
	if _, err := pay.Capture(ctx, soakKey(b, "capture"), pi.ID); err != nil {
		return "", err
	}
	return pi.ID, nil
}

// start starts the booking's lifecycle with the options the appointment
// starts its child with.
func (s *seeder) start(ctx context.Context, b seeded) error {
	_, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: lifecycle.WorkflowID(b.in.Reference), TaskQueue: s.cfg.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: lifecycle.StartAttributes(workflows.KeyedAttributes(b.in.Customer, b.key), b.in),
		StaticSummary:         lifecycle.Summary(b.in),
	}, lifecycle.WorkflowName, b.in)
	return err
}

// soakKey is a step's Idempotency-Key, derived from the booking's
// reference like an activity's from its execution.
func soakKey(b seeded, step string) string {
	return activities.Key("soak", b.in.Reference, "", step)
}

package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// wish is a booking request in canonical form: what the intent hashes.
type wish struct {
	customer, service string
	// key is the customer's keyed hash, which the intent ID hashes in the
	// number's place.
	key    customerid.Key
	start  time.Time // to the minute, in the business time zone
	second bool
}

// Book books one appointment, once per business intent: the same wish
// again (retried, rephrased, parallel, from another agent or channel) maps
// to the same workflow; a different wish of the same customer close in
// time answers needs_confirmation instead of booking a second.
func (s *Service) Book(ctx context.Context, c Caller, in BookInput) (BookingAnswer, error) {
	// Decide and start detached from the caller: an agent that gives up
	// mid-call must not leave a decision whose saga never started (a timeout
	// is an unknown; its retry then finds the booking under way).
	run, cancel := context.WithTimeout(context.WithoutCancel(ctx), decideTimeout)
	defer cancel()
	a, pl, err := s.book(run, c, in)
	if err != nil || a.Status != "" {
		return a, err
	}
	t := time.Now()
	st, found := s.await(ctx, a.WorkflowID)
	t = s.Metrics.since(PhaseAwait, t)
	if !found && a.merged {
		// The decision names a saga no one could be seen running: its
		// decider may have died between decision and start. Starting it is
		// safe either way: a start that meets the saga attaches to it.
		if err := s.start(run, pl.profile, pl.decision, pl.intentID, pl.wish); err != nil {
			s.Logger.Warn("agent booking start unknown", "workflow_id", a.WorkflowID, "error", err)
		}
	}
	out := answer(a, st, found, a.merged)
	if !found || st.Status != workflows.StatusConfirmed {
		return out, nil
	}
	// A confirmed booking may be ending: its lifecycle knows (a cancel
	// under way, then cancelled). "Booked." would be false while the
	// booking the wish met is being cancelled.
	now, err := workflows.ConfirmedNow(ctx, s.Temporal, a.WorkflowID)
	s.Metrics.since(PhaseLifecycle, t)
	if err != nil {
		return BookingAnswer{}, fmt.Errorf("read the lifecycle of %s (nothing was booked twice; the same call may be repeated): %w", a.WorkflowID, err)
	}
	return afterConfirmation(out, now, pl.profile), nil
}

// plan is what a booking decided, for starting its saga.
type plan struct {
	profile  *tenants.Profile
	decision dedup.Decision
	intentID string
	wish     wish
}

// decideTimeout bounds the decision and the start of a booking.
const decideTimeout = 30 * time.Second

// book validates, claims the operation, decides and starts; an answer
// with a Status is final already (needs_confirmation, start unknown).
func (s *Service) book(ctx context.Context, c Caller, in BookInput) (BookingAnswer, plan, error) {
	started := time.Now()
	p, err := s.profile(c)
	if err != nil {
		return BookingAnswer{}, plan{}, err
	}
	w, err := s.wish(ctx, p, in)
	if err != nil {
		return BookingAnswer{}, plan{}, err
	}
	intentID, err := workflows.IntentID(c.Tenant, w.key, w.service, "", w.start)
	if err != nil {
		return BookingAnswer{}, plan{}, err
	}
	opKey, repeated, err := s.operationKey(ctx, c, in.OperationID, intentID, w)
	if err != nil {
		return BookingAnswer{}, plan{}, err
	}
	key := dedupKey(c.Tenant, opKey, intentID, w.second)
	if in.OperationID == "" {
		// The implicit operation is the wish: once its booking is over
		// (cancelled, ended) or moved to another slot, the same wish is a
		// new booking.
		if key, err = s.Dedup.Current(ctx, key, w.start.UTC()); err != nil {
			return BookingAnswer{}, plan{}, fmt.Errorf("dedup decision (nothing was booked; the same call may be repeated): %w", err)
		}
	}
	d, err := s.Dedup.Decide(ctx, key, dedup.Intent{
		Tenant: c.Tenant, IntentID: intentID, Customer: w.customer, Service: w.service, SlotStart: w.start.UTC(),
		Channel: string(workflows.ChannelAgent), EventID: "agent:" + opKey, WorkflowID: appointment.WorkflowID(c.Tenant, intentID),
		LegacyIntentID: workflows.LegacyIntentID(c.Tenant, w.customer, w.service, "", w.start),
		Separate:       w.second, Ask: true,
	})
	if err != nil {
		return BookingAnswer{}, plan{}, fmt.Errorf("dedup decision (nothing was booked; the same call may be repeated): %w", err)
	}
	started = s.Metrics.since(PhaseDecide, started)
	a := BookingAnswer{Service: w.service, Start: w.start.Format(time.RFC3339), OperationID: in.OperationID, operation: opKey, intentID: intentID}
	switch d.Kind {
	case dedup.Ask, dedup.Review:
		return s.needsConfirmation(ctx, p, a, d), plan{}, nil
	case dedup.Merge:
		s.Metrics.duplicate(c.Tenant) // another operation's booking, asked for again
	default:
		if repeated {
			s.Metrics.duplicate(c.Tenant) // the same operation again: a retry or a parallel call
		}
		err := s.start(ctx, p, d, intentID, w)
		s.Metrics.since(PhaseStart, started)
		if err != nil {
			s.Logger.Warn("agent booking start unknown", "workflow_id", d.WorkflowID, "error", err)
			a.WorkflowID, a.Status = d.WorkflowID, StatusPending
			a.Message = "The booking could not be confirmed as started (outcome unknown). Call book_appointment again with the same arguments and operation_id: it will not book twice."
			return a, plan{}, nil
		}
	}
	a.WorkflowID, a.merged = d.WorkflowID, d.Kind == dedup.Merge
	return a, plan{profile: p, decision: d, intentID: intentID, wish: w}, nil
}

// keys is the Keyer of the customer keys: Keys, or the development key
// (which config.CheckSecrets refuses on a reachable gateway).
func (s *Service) keys() *customerid.Keyer {
	if s.Keys != nil {
		return s.Keys
	}
	return customerid.Dev()
}

// wish validates the input against the catalogue and opening hours, as
// the conversation does, and resolves a spoken slot.
func (s *Service) wish(ctx context.Context, p *tenants.Profile, in BookInput) (wish, error) {
	cust, err := customer(in.Customer)
	if err != nil {
		return wish{}, err
	}
	if _, ok := p.Service(in.Service); !ok {
		return wish{}, unknownService(p, in.Service)
	}
	now := s.now()
	start, err := s.start1(ctx, p, in.Start, now)
	if err != nil {
		return wish{}, err
	}
	r := intent.Result{Kind: intent.KindBook, Service: in.Service, Start: start, HasDate: true, HasTime: true, Lang: string(p.Language)}
	if err := intent.Validate(r, now, p.Location, p.Catalogue()); err != nil {
		var ve *intent.ValidationError
		if errors.As(err, &ve) {
			return wish{}, fmt.Errorf("slot not bookable: %s", ve.Question)
		}
		return wish{}, err
	}
	key, err := s.keys().Key(p.ID, cust)
	if err != nil {
		return wish{}, err
	}
	return wish{customer: cust, key: key, service: in.Service, start: start, second: in.ConfirmSecond}, nil
}

// start1 reads start as RFC 3339 or as a phrase ("Dienstag 14 Uhr").
func (s *Service) start1(ctx context.Context, p *tenants.Profile, raw string, now time.Time) (time.Time, error) {
	raw = strings.TrimSpace(raw)
	if t, err := time.Parse(time.RFC3339, raw); err == nil {
		return t.In(p.Location).Truncate(time.Minute), nil
	}
	r, err := s.Extractor.Extract(ctx, raw, now, p.Location, p.Catalogue())
	if err != nil || !r.HasDate || !r.HasTime || r.Start.IsZero() {
		return time.Time{}, fmt.Errorf("start %q is neither RFC 3339 nor a day and time I can tell without guessing (Dienstag 14 Uhr, 1.12. um 9:30); ask the customer", raw)
	}
	return r.Start.In(p.Location).Truncate(time.Minute), nil
}

// operationKey verifies and claims a server-issued operation ID, or,
// without one, names the implicit operation of the intent itself (so
// parallel and repeated calls without an ID still share one answer).
// repeated: the operation was claimed before (a retry or parallel call).
func (s *Service) operationKey(ctx context.Context, c Caller, id, intentID string, w wish) (key string, repeated bool, err error) {
	key = "intent"
	if id != "" {
		if err := s.Signer.Verify(id, c.Tenant, c.Scope, CapabilitiesVersion(), s.now()); err != nil {
			return "", false, err
		}
		sum := sha256.Sum256([]byte(id))
		key = "op:" + hex.EncodeToString(sum[:12])
	}
	args := sha256.Sum256([]byte(strings.Join([]string{string(ToolBookAppointment), w.customer, w.service, w.start.UTC().Format(time.RFC3339), fmt.Sprint(w.second)}, "\x00")))
	want := hex.EncodeToString(args[:])
	claim := key
	if id == "" {
		claim = "intent:" + intentID + ":" + fmt.Sprint(w.second)
	}
	// xmax is set on a row this statement updated, i.e. one that existed.
	var stored string
	err = s.Pool.QueryRow(ctx, `INSERT INTO agent_operations (tenant_id, operation_id, args_hash) VALUES ($1, $2, $3)
		ON CONFLICT (tenant_id, operation_id) DO UPDATE SET operation_id = EXCLUDED.operation_id RETURNING args_hash, xmax <> 0`,
		c.Tenant, claim, want).Scan(&stored, &repeated)
	if err != nil {
		return "", false, fmt.Errorf("claim operation (nothing was booked; the same call may be repeated): %w", err)
	}
	if stored != want {
		return "", false, ErrOperationReused
	}
	return key, repeated, nil
}

// dedupKey is the key of the dedup decision for an operation and intent:
// a repeat of the operation replays the decision instead of taking one.
func dedupKey(tenant, opKey, intentID string, second bool) string {
	k := "agent/" + tenant + "/" + opKey + "/" + intentID
	if second {
		k += "/second"
	}
	return k
}

// start launches the saga under the decided workflow ID; a start that
// meets the running or completed saga attaches to it.
func (s *Service) start(ctx context.Context, p *tenants.Profile, d dedup.Decision, intentID string, w wish) error {
	dep, _ := p.Deposit(w.service)
	_, _, err := appointment.StartAs(ctx, s.Temporal, s.TaskQueue, d.WorkflowID, appointment.Request{
		Tenant: p.ID, Customer: w.customer, CustomerKey: w.key, Service: w.service, SlotStart: w.start.UTC(), Channel: workflows.ChannelAgent,
		IntentID: intentID, DepositAmount: dep.Amount, Currency: dep.Currency, PaymentMethod: s.PaymentMethod,
		Timezone: p.Location.String(), Terms: p.Terms(), DeliberateSecond: w.second,
	})
	if err != nil {
		// The decision stands; repeating the same call starts it then.
		return fmt.Errorf("start booking %s: %w", d.WorkflowID, err)
	}
	return nil
}

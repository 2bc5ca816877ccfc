package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nyaruka/phonenumbers"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/tenants"
)

// DefaultWait is how long a mutating tool waits for the saga before it
// answers pending: long enough for a booking without a deposit or with a
// card, short enough that no agent platform times the call out.
const DefaultWait = 8 * time.Second

// Service runs the tools for a tenant's caller; MCP and HTTP are two
// doors to it.
type Service struct {
	Pool      *pgxpool.Pool
	Temporal  client.Client
	TaskQueue string
	// Tenants returns a tenant's configuration (tenants.Registry.Get).
	Tenants func(id string) (*tenants.Profile, bool)
	// Tokens authenticates a caller's bearer token (the APIs' tokens).
	Tokens web.TokenLookup
	// CalendarURL is where find_slots asks for availability, with the
	// caller's own token.
	CalendarURL string
	Dedup       *dedup.Store
	// Extractor understands "Dienstag 14 Uhr" (the conversation's).
	Extractor intent.Extractor
	Signer    Signer
	// PaymentMethod pays deposits: "" sends a payment link (DEPOSIT_MODE).
	PaymentMethod string
	// Keys names customers in the search attributes of the appointments
	// started here and keys their intent IDs (BOOKONCE_CUSTOMER_ID_KEY);
	// nil: the development key.
	Keys *customerid.Keyer
	// Wait bounds a mutating call (DefaultWait when zero).
	Wait time.Duration
	// PlatformSecrets are the secrets the tenants' voice platforms sign
	// their tool calls with (VOICE_PLATFORM_SECRETS); nil: none.
	PlatformSecrets PlatformSecrets
	// Idempotency keys the HTTP variant's mutating calls (Idempotency-Key).
	Idempotency *idempotency.Store
	Metrics     *Metrics
	Logger      *slog.Logger
	Now         func() time.Time
}

// Caller is who calls a tool: the tenant from the token, the token itself
// (find_slots asks the calendar with it), and the operation scope.
type Caller struct {
	Tenant string
	Token  string
	// Scope is the MCP session an operation ID is bound to; "" when
	// stateless or over HTTP (then the tenant is the scope).
	Scope string
	// ClientKey is an idempotency key the client sent along (MCP _meta, or
	// HTTP Idempotency-Key): recorded, never trusted alone.
	ClientKey string
}

// errUnauthenticated: the token is not a tenant's.
var errUnauthenticated = errors.New("unauthenticated: send Authorization: Bearer <token> with a tenant's API token")

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) wait() time.Duration {
	if s.Wait > 0 {
		return s.Wait
	}
	return DefaultWait
}

func (s *Service) profile(c Caller) (*tenants.Profile, error) {
	p, ok := s.Tenants(c.Tenant)
	if !ok {
		return nil, fmt.Errorf("tenant %q is not configured", c.Tenant)
	}
	return p, nil
}

// ListServices returns the tenant's catalogue.
func (s *Service) ListServices(_ context.Context, c Caller, _ ListServicesInput) (ListServicesOutput, error) {
	p, err := s.profile(c)
	if err != nil {
		return ListServicesOutput{}, err
	}
	out := ListServicesOutput{Timezone: p.Location.String(), Services: []ServiceInfo{}}
	for _, svc := range p.Services {
		out.Services = append(out.Services, ServiceInfo{
			ID: svc.ID, Name: svc.Name, DurationMinutes: int(svc.Duration / time.Minute),
			DepositAmount: svc.Deposit.Amount, Currency: svc.Deposit.Currency, Resources: append([]string{}, svc.Resources...),
		})
	}
	return out, nil
}

// BeginOperation issues an operation ID for one booking.
func (s *Service) BeginOperation(_ context.Context, c Caller, _ BeginOperationInput) (OperationOutput, error) {
	return s.issue(c)
}

func (s *Service) issue(c Caller) (OperationOutput, error) {
	id, err := s.Signer.Issue(c.Tenant, c.Scope, CapabilitiesVersion(), s.now())
	if err != nil {
		return OperationOutput{}, err
	}
	return OperationOutput{OperationID: id, CapabilitiesVersion: CapabilitiesVersion()}, nil
}

// maxSlotWindow bounds a find_slots search.
const maxSlotWindow = 14 * 24 * time.Hour

// FindSlots lists free slots (asking the calendar API with the caller's
// token) and issues an operation for booking one.
func (s *Service) FindSlots(ctx context.Context, c Caller, in FindSlotsInput) (FindSlotsOutput, error) {
	p, err := s.profile(c)
	if err != nil {
		return FindSlotsOutput{}, err
	}
	if _, ok := p.Service(in.Service); !ok {
		return FindSlotsOutput{}, unknownService(p, in.Service)
	}
	from, to, err := s.window(ctx, p, in)
	if err != nil {
		return FindSlotsOutput{}, err
	}
	slots, err := calendar.NewClient(s.CalendarURL, c.Token).Availability(ctx, in.Service, in.ResourceID, from, to)
	if err != nil {
		return FindSlotsOutput{}, fmt.Errorf("ask the calendar for free slots: %w", err)
	}
	op, err := s.issue(c)
	if err != nil {
		return FindSlotsOutput{}, err
	}
	out := FindSlotsOutput{Slots: []Slot{}, OperationOutput: op}
	for _, sl := range slots {
		out.Slots = append(out.Slots, Slot{Start: sl.Start.In(p.Location).Format(time.RFC3339), ResourceID: sl.ResourceID})
	}
	return out, nil
}

// window is find_slots' search window: from/to, or the day "when" names.
func (s *Service) window(ctx context.Context, p *tenants.Profile, in FindSlotsInput) (time.Time, time.Time, error) {
	now := s.now()
	if in.When != "" {
		r, err := s.Extractor.Extract(ctx, in.When, now, p.Location, p.Catalogue())
		if err != nil || !r.HasDate {
			return time.Time{}, time.Time{}, fmt.Errorf("when %q names no day I can tell; give a date (1.12., Dienstag, tomorrow) or from/to in RFC 3339", in.When)
		}
		if r.HasTime {
			return r.Start, r.Day.AddDate(0, 0, 1), nil
		}
		return r.Day, r.Day.AddDate(0, 0, 1), nil
	}
	from, to := now, time.Time{}
	var err error
	if in.From != "" {
		if from, err = time.Parse(time.RFC3339, in.From); err != nil {
			return from, to, fmt.Errorf("from %q is not RFC 3339 (2026-12-01T14:00:00+01:00)", in.From)
		}
	}
	to = from.Add(24 * time.Hour)
	if in.To != "" {
		if to, err = time.Parse(time.RFC3339, in.To); err != nil {
			return from, to, fmt.Errorf("to %q is not RFC 3339", in.To)
		}
	}
	if !to.After(from) || to.Sub(from) > maxSlotWindow {
		return from, to, errors.New("the window from..to must be positive and at most 14 days")
	}
	return from, to, nil
}

func unknownService(p *tenants.Profile, id string) error {
	ids := make([]string, 0, len(p.Services))
	for _, svc := range p.Services {
		ids = append(ids, svc.ID)
	}
	return fmt.Errorf("unknown service %q; the services are: %s (see list_services)", id, strings.Join(ids, ", "))
}

// customer normalises a phone number to E.164 (German numbers may come
// national, as callers say them).
func customer(raw string) (string, error) {
	num, err := phonenumbers.Parse(strings.TrimPrefix(strings.TrimSpace(raw), "whatsapp:"), "DE")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return "", errors.New("customer must be a valid phone number in E.164 (+4915112345678)")
	}
	return phonenumbers.Format(num, phonenumbers.E164), nil
}

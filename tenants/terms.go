package tenants

import (
	"slices"
	"time"
)

// Terms is what a conversation and its appointments need of their
// tenant's configuration: language, time zone, wording and per service
// the label and the deposit. It travels in workflow inputs and activity
// results, so the workflows decide from recorded values and replay
// deterministically while a reloaded tenants.yaml reaches running
// conversations with their next message.
type Terms struct {
	// Name is the business's name, shown on the payment page.
	Name string `json:"name,omitempty"`
	// Language is what customers are answered in ("de", "en").
	Language string `json:"language"`
	// Timezone (IANA) in which messages state times.
	Timezone string `json:"timezone"`
	// Wording are the tenant's own texts in Language (template name ->
	// text/template text); the built-in texts of Language fill the rest.
	Wording map[string]string `json:"wording,omitempty"`
	// Services by ID.
	Services map[string]ServiceTerms `json:"services,omitempty"`
	// CancellationWindow is the tenant's policies.cancellation_window: a
	// booking cancelled at least this long before its slot gets its
	// deposit back. Zero: the booking lifecycle's default (24 h).
	CancellationWindow time.Duration `json:"cancellation_window,omitempty"`
	// Reminders are policies.reminders: offsets before the slot at which
	// a confirmed booking's reminder is sent, longest first. Empty: the
	// booking lifecycle's defaults (24 h and 2 h).
	Reminders []time.Duration `json:"reminders,omitempty"`
	// QuietOpens and QuietCloses are policies.quiet_hours ("21:00",
	// "08:00", local time, may wrap midnight); empty: no quiet hours.
	QuietOpens  string `json:"quiet_opens,omitempty"`
	QuietCloses string `json:"quiet_closes,omitempty"`
	// ReminderLead is the worker's REMINDER_LEAD, not the tenant's: the
	// booking lifecycle's workflows.Tuning.ReminderLead (zero: its 1 h).
	// It travels with the terms because they are what reaches a booking
	// from the worker's configuration.
	ReminderLead time.Duration `json:"reminder_lead,omitempty"`
	// DecisionTimeout is the worker's PAYMENT_DECISION_TIMEOUT, not the
	// tenant's: how long a booking's payment saga waits for its decision
	// before it asks whether the booking still runs (zero: derived from
	// the booking's bounds). The chaos drill shortens it so that its
	// calendar outage outlasts it.
	DecisionTimeout time.Duration `json:"decision_timeout,omitempty"`
	// OptOutKeywords and OptInKeywords are policies.opt_out_keywords and
	// opt_in_keywords (nil: consent's defaults).
	OptOutKeywords []string `json:"opt_out_keywords,omitempty"`
	OptInKeywords  []string `json:"opt_in_keywords,omitempty"`
	// CallerLinks is policies.caller_links: "sms" sends a caller's
	// payment link by SMS ("": WhatsApp).
	CallerLinks string `json:"caller_links,omitempty"`
}

// ServiceTerms are a service's label in the tenant's language and its
// deposit (minor units, lower-case currency).
type ServiceTerms struct {
	Label         string `json:"label"`
	DepositAmount int64  `json:"deposit_amount"`
	Currency      string `json:"currency"`
}

// Terms resolves the tenant's terms from its profile.
func (p *Profile) Terms() *Terms {
	t := &Terms{Name: p.Name, Language: string(p.Language), Timezone: p.Timezone, Services: map[string]ServiceTerms{},
		CancellationWindow: p.Policies.CancellationWindow, Reminders: slices.Clone(p.Policies.Reminders),
		OptOutKeywords: slices.Clone(p.Policies.OptOutKeywords), OptInKeywords: slices.Clone(p.Policies.OptInKeywords),
		CallerLinks: p.Policies.CallerLinks}
	if q := p.Policies.QuietHours; q != nil {
		t.QuietOpens, t.QuietCloses = q.Opens, q.Closes
	}
	if own := p.Templates[p.Language]; len(own) > 0 {
		t.Wording = make(map[string]string, len(own))
		for name, text := range own {
			t.Wording[string(name)] = text
		}
	}
	for _, s := range p.Services {
		t.Services[s.ID] = ServiceTerms{Label: p.Label(s.ID, p.Language), DepositAmount: s.Deposit.Amount, Currency: s.Deposit.Currency}
	}
	return t
}

package stack

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/consent"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// SendEvery is how often the outbox relay looks for reserved messages.
const SendEvery = 2 * time.Second

// OutboxSender builds the relay that sends reserved messages through
// Twilio exactly once (reserve, send, record; reconcile, never re-send).
func OutboxSender(cfg config.Config, pool *pgxpool.Pool, provider outbox.Provider, log *slog.Logger) *outbox.Sender {
	return &outbox.Sender{
		Store: &outbox.Store{Pool: pool, Sealer: cfg.PayloadCodec}, Provider: provider, SendTimeout: cfg.OutboxSendTimeout,
		CallbackURL: outbox.StatusCallback(cfg.PublicBaseURL, channels.RouteStatus), Log: log.With("component", "outbox"),
		Suppress: OptedOut(ConsentStore(cfg, pool)),
		Window:   channels.ServiceWindow{Pool: pool, Keys: cfg.CustomerKeys()}.Open,
		// A link or confirmation WhatsApp cannot deliver to the number
		// (a caller's landline) goes once more by SMS.
		SMSFallback: twilio.NotOnChannel,
	}
}

// ForTenants gives the relay each shop's own sending rules from the
// tenants' configuration: its number (TenantSender) and its approved
// WhatsApp templates (TenantTemplates).
func ForTenants(s *outbox.Sender, reg *tenants.Registry) {
	s.From = TenantSender(reg)
	s.Template = TenantTemplates(reg)
}

// TenantSender is the relay's From: a shop's messages leave from its
// sender for the channel (tenants.yaml senders), else the first of its
// Twilio numbers, the one its customers know; a tenant without numbers
// uses TWILIO_FROM.
func TenantSender(reg *tenants.Registry) func(tenant, channel string) string {
	return func(tenant, channel string) string {
		if p, ok := reg.Get(tenant); ok {
			return p.SenderFor(channel)
		}
		return ""
	}
}

// TenantTemplates is the relay's Template: the shop's approved WhatsApp
// template for a message, in the shop's language (tenants.yaml
// whatsapp_templates), filled with the message's fields.
func TenantTemplates(reg *tenants.Registry) func(tenant, name string, fields map[string]string) (outbox.Template, bool) {
	return func(tenant, name string, fields map[string]string) (outbox.Template, bool) {
		p, ok := reg.Get(tenant)
		if !ok {
			return outbox.Template{}, false
		}
		w, ok := p.WhatsApp[p.Language][tenants.TemplateName(name)]
		if !ok {
			return outbox.Template{}, false
		}
		vars, body := w.Fill(fields)
		return outbox.Template{ContentSid: w.ContentSid, Vars: vars, Body: body}, true
	}
}

// ConsentStore is the consent trail of the configuration (STOP, START).
func ConsentStore(cfg config.Config, pool *pgxpool.Pool) *consent.Store {
	return &consent.Store{Pool: pool, Keys: cfg.CustomerKeys()}
}

// OptedOut is the relay's suppression rule: a reminder to a customer
// whose latest word to the shop was STOP is not sent. Replies, the
// confirmation, a cancellation or move and payment messages answer what
// the customer did, and go out.
func OptedOut(store *consent.Store) func(ctx context.Context, tenant, kind, recipient string) (bool, error) {
	return func(ctx context.Context, tenant, kind, recipient string) (bool, error) {
		if !strings.HasPrefix(kind, lifecycle.MessageKindReminder) {
			return false, nil
		}
		return store.OptedOut(ctx, tenant, recipient)
	}
}

// Twilio is the real Twilio client of the configuration.
func Twilio(cfg config.Config) *twilio.Client {
	var opts []twilio.Option
	if cfg.TwilioAPIURL != "" {
		opts = append(opts, twilio.WithBaseURL(cfg.TwilioAPIURL))
	}
	return twilio.New(cfg.TwilioAccountSID, cfg.TwilioAuthToken, cfg.TwilioFrom, opts...)
}

// DevTwilio starts an in-process fake of Twilio's message API for `make
// run` with the development token, so the whole flow works offline. The
// tenants' WhatsApp templates are approved at the fake, as the shops had
// them approved at their real accounts.
func DevTwilio(cfg config.Config, reg *tenants.Registry) (*twilio.Client, *twilio.FakeServer) {
	fake := twilio.NewFakeServer()
	for _, p := range reg.All() {
		ApproveTemplates(fake, p.Tenant)
	}
	return twilio.New(fake.AccountSID, fake.AuthToken, cfg.TwilioFrom, twilio.WithBaseURL(fake.URL())), fake
}

// ApproveTemplates approves the tenants' WhatsApp templates at a fake
// Twilio, as each shop had them approved at its account.
func ApproveTemplates(fake *twilio.FakeServer, ts ...tenants.Tenant) {
	for _, t := range ts {
		for _, byName := range t.WhatsApp {
			for _, w := range byName {
				fake.ApproveContent(w.ContentSid, w.Text)
			}
		}
	}
}

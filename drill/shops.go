package drill

import (
	"fmt"
	"strings"
	"time"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/twilio"
)

// The drill runs two shops on one Twilio account, as a platform does: the
// demo shop and a second one with its own numbers, a WhatsApp sender and
// another number for SMS. A share of the simple customers (one wish, no
// later change) write and call the second shop; every message at Twilio
// must have left from the sender of the customer's shop for its channel,
// or a customer would answer the wrong shop, or a shop's number would
// speak for another.

// DefaultSecondShopShare is the percent of simple customers who are the
// second shop's.
const DefaultSecondShopShare = 20

// The second shop: its tenant ID and its numbers (WhatsApp and voice on
// one, SMS from the other).
const (
	secondShop         = "nord"
	secondShopWhatsApp = "+4940123456"
	secondShopSMS      = "+4940123457"
)

// secondShopOf is the second shop: the demo shop's catalogue and policies
// under its own name, numbers and senders, sending a caller's payment
// link by SMS (so that its SMS sender is used). It has no API token: the
// drill's agents and API changes are the demo shop's customers'.
func secondShopOf(demo tenants.Tenant) tenants.Tenant {
	t := demo
	t.ID, t.Name, t.TokenHashes = secondShop, "Werkstatt Nord", nil
	t.Numbers = []string{secondShopWhatsApp, secondShopSMS}
	t.Senders = tenants.Senders{WhatsApp: secondShopWhatsApp, SMS: secondShopSMS}
	t.Policies.CallerLinks = "sms"
	return t
}

// markShops gives share percent of the simple customers (one wish, by
// WhatsApp or voice, no later change) to the second shop. It draws from
// other digits of Phrasing than markWindows, so that some of them are
// also stale or write STOP.
func markShops(all []Scenario, share int) {
	for i, s := range all {
		simple := s.Kind == WhatsApp || s.Kind == Voice || s.Kind == Rephrase || s.Kind == CrossChannel
		if simple && s.Change == nil && s.Phrasing/100%100 < share {
			all[i].Tenant = secondShop
		}
	}
}

// tenant is the ID of the shop the customer writes to and calls.
func (s Scenario) tenant() string {
	if s.Tenant != "" {
		return s.Tenant
	}
	return config.DefaultTenant
}

// shop is the number the customer writes to and calls.
func (s Scenario) shop() string {
	if s.Tenant == secondShop {
		return secondShopWhatsApp
	}
	return twilio.SimulatedShop
}

// Senders is what the drill found of the shops' senders at Twilio.
type Senders struct {
	// Messages counts the messages to the drill's customers per shop.
	Messages map[string]int `json:"messages"`
	// Wrong are messages that left from another number than the
	// customer's shop's sender for their channel (must be 0).
	Wrong    int      `json:"wrong_sender"`
	Examples []string `json:"examples,omitempty"`
}

// senders checks every message to a drill customer against the sender of
// the customer's shop.
func senders(all []Scenario, shops map[string]tenants.Tenant, msgs []twilio.FakeMessage) Senders {
	byCustomer := make(map[string]Scenario, len(all))
	for _, s := range all {
		byCustomer[s.Customer] = s
	}
	r := Senders{Messages: map[string]int{}}
	for _, m := range msgs {
		number, onWhatsApp := strings.CutPrefix(m.To, "whatsapp:")
		s, ok := byCustomer[number]
		if !ok {
			continue
		}
		r.Messages[s.tenant()]++
		channel, prefix := "sms", ""
		if onWhatsApp {
			channel, prefix = "whatsapp", "whatsapp:"
		}
		if want := prefix + shops[s.tenant()].SenderFor(channel); m.From != want {
			r.Wrong++
			if len(r.Examples) < 5 {
				r.Examples = append(r.Examples, fmt.Sprintf("%s to %s from %s, not %s", m.Sid, mask.Phones(m.To), m.From, want))
			}
		}
	}
	return r
}

// failures are the sender checks that fail the drill: a wrong sender, or
// a second shop whose customers got nothing (the check would be empty).
func (r Senders) failures(all []Scenario) []string {
	var out []string
	if r.Wrong > 0 {
		out = append(out, fmt.Sprintf("%d messages left from another shop's number: %v", r.Wrong, r.Examples))
	}
	for _, s := range all {
		if s.Tenant == secondShop && r.Messages[secondShop] == 0 {
			out = append(out, "the second shop's customers received no message at all")
			break
		}
	}
	return out
}

// serviceDuration is how long a shop's service takes (the longest, for
// one it does not have).
func (e *env) serviceDuration(tenant, service string) time.Duration {
	for _, s := range e.shops[tenant].Services {
		if s.ID == service {
			return s.Duration
		}
	}
	return maxService
}

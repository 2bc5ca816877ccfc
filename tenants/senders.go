package tenants

import (
	"slices"

	"go.yaml.in/yaml/v3"
)

// Senders are the numbers a shop's messages leave from, per channel: a
// WhatsApp sender is a number registered with WhatsApp, and not every
// number can send SMS (a WhatsApp-only sender, a number of a country
// whose SMS needs another). Each is one of the tenant's twilio_numbers, so
// that the customer's answer comes back to the shop. Empty: the first of
// the tenant's numbers.
//
//	senders:
//	  whatsapp: "+4930123456"
//	  sms: "+4930123457"
type Senders struct {
	WhatsApp string `json:"whatsapp,omitempty"`
	SMS      string `json:"sms,omitempty"`
}

// SenderFor is the number a message on channel ("whatsapp"; "sms" and "voice"
// answer by SMS) leaves from: the configured sender, else the first of
// the tenant's numbers, else "" (the provider's default).
func (t Tenant) SenderFor(channel string) string {
	own := t.Senders.SMS
	if channel == "whatsapp" {
		own = t.Senders.WhatsApp
	}
	if own != "" {
		return own
	}
	if len(t.Numbers) > 0 {
		return t.Numbers[0]
	}
	return ""
}

// senders reads "senders: {whatsapp: …, sms: …}".
func (r *reader) senders(n *yaml.Node, path string) Senders {
	m := r.mapping(n, path, "whatsapp", "sms")
	var s Senders
	s.WhatsApp, _ = r.str(m["whatsapp"], join(path, "whatsapp"))
	s.SMS, _ = r.str(m["sms"], join(path, "sms"))
	return s
}

// senders checks that each sender is one of the tenant's numbers.
func (v *validator) senders(p string, t Tenant) {
	own := make([]string, len(t.Numbers))
	for i, n := range t.Numbers {
		own[i] = NormaliseNumber(n)
	}
	for name, n := range map[string]string{"whatsapp": t.Senders.WhatsApp, "sms": t.Senders.SMS} {
		if n == "" {
			continue
		}
		if !slices.Contains(own, NormaliseNumber(n)) {
			v.fail(join(p, name), "%q is not one of the tenant's twilio_numbers: the customer's answer must come back to the shop", n)
		}
	}
}

// normaliseSenders writes the senders as the numbers are stored.
func normaliseSenders(s Senders) Senders {
	if s.WhatsApp != "" {
		s.WhatsApp = NormaliseNumber(s.WhatsApp)
	}
	if s.SMS != "" {
		s.SMS = NormaliseNumber(s.SMS)
	}
	return s
}

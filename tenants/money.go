package tenants

import (
	"fmt"
	"strings"
)

// Format writes m as lang writes money: "20,00 €" in German, "€20.00" in
// English; currencies other than the euro by code. Messages (the
// workflows' texts) and spoken answers (the gateway's) state deposits
// this one way.
func (m Money) Format(lang Language) string {
	whole, cents := m.Amount/100, m.Amount%100
	if cents < 0 {
		cents = -cents
	}
	code := strings.ToUpper(m.Currency)
	if lang == German {
		s := fmt.Sprintf("%d,%02d", whole, cents)
		if code == "EUR" {
			return s + " €"
		}
		return s + " " + code
	}
	s := fmt.Sprintf("%d.%02d", whole, cents)
	if code == "EUR" {
		return "€" + s
	}
	return code + " " + s
}

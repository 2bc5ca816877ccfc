package drill

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/twilio"
)

func TestSendersFindsAMessageFromAnotherShopsNumber(t *testing.T) {
	demo := tenants.Tenant{ID: "demo", Numbers: []string{twilio.SimulatedShop}}
	shops := map[string]tenants.Tenant{"demo": demo, secondShop: secondShopOf(demo)}
	all := []Scenario{{Customer: "+4915100000001"}, {Customer: "+4915100000002", Tenant: secondShop}}
	tests := []struct {
		name  string
		msg   twilio.FakeMessage
		wrong int
	}{
		{"demo shop by WhatsApp", twilio.FakeMessage{To: "whatsapp:+4915100000001", From: "whatsapp:" + twilio.SimulatedShop}, 0},
		{"demo shop by SMS", twilio.FakeMessage{To: "+4915100000001", From: twilio.SimulatedShop}, 0},
		{"second shop by WhatsApp", twilio.FakeMessage{To: "whatsapp:+4915100000002", From: "whatsapp:" + secondShopWhatsApp}, 0},
		{"second shop by SMS from its SMS number", twilio.FakeMessage{To: "+4915100000002", From: secondShopSMS}, 0},
		{"second shop's customer from the demo shop", twilio.FakeMessage{To: "whatsapp:+4915100000002", From: "whatsapp:" + twilio.SimulatedShop}, 1},
		{"second shop's SMS from its WhatsApp number", twilio.FakeMessage{To: "+4915100000002", From: secondShopWhatsApp}, 1},
		{"demo customer from the second shop", twilio.FakeMessage{To: "+4915100000001", From: secondShopSMS}, 1},
		{"not a drill customer", twilio.FakeMessage{To: "+4915199999999", From: "+10000000000"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			heard := twilio.FakeMessage{To: "whatsapp:+4915100000002", From: "whatsapp:" + secondShopWhatsApp}
			r := senders(all, shops, []twilio.FakeMessage{tc.msg, heard})
			require.Equal(t, tc.wrong, r.Wrong, "%+v", r)
			require.Equal(t, tc.wrong > 0, len(r.failures(all)) > 0)
		})
	}
}

func TestSendersFailsWhenTheSecondShopHeardNothing(t *testing.T) {
	demo := tenants.Tenant{ID: "demo", Numbers: []string{twilio.SimulatedShop}}
	shops := map[string]tenants.Tenant{"demo": demo, secondShop: secondShopOf(demo)}
	all := []Scenario{{Customer: "+4915100000001"}, {Customer: "+4915100000002", Tenant: secondShop}}
	r := senders(all, shops, []twilio.FakeMessage{{To: "whatsapp:+4915100000001", From: "whatsapp:" + twilio.SimulatedShop}})
	require.Len(t, r.failures(all), 1)
}

func TestMarkShopsTakesOnlySimpleCustomers(t *testing.T) {
	all := []Scenario{
		{Kind: WhatsApp, Phrasing: 0}, {Kind: Voice, Phrasing: 100}, {Kind: Agent, Phrasing: 0},
		{Kind: WhatsApp, Phrasing: 0, Change: &Change{}}, {Kind: Second, Phrasing: 0}, {Kind: WhatsApp, Phrasing: 9900},
	}
	markShops(all, 20)
	var got []string
	for _, s := range all {
		got = append(got, s.tenant())
	}
	require.Equal(t, []string{secondShop, secondShop, "demo", "demo", "demo", "demo"}, got)
}

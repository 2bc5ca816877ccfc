package tenants_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/tenants"
)

// withWhatsApp is valid with an approved template for every message that
// can leave outside WhatsApp's window; the reminder's is written out so
// that cases can break it.
func withWhatsApp() string {
	var b strings.Builder
	b.WriteString(valid + "    whatsapp_templates:\n      de:\n")
	b.WriteString("        reminder: {content_sid: HX0123456789abcdef0123456789abcdef, text: \"Erinnerung: {{1}} am {{2}}.\", variables: [service, when]}\n")
	for i, n := range tenants.WindowTemplates {
		if n != tenants.TemplateReminder {
			fmt.Fprintf(&b, "        %s: {content_sid: HX%032x, text: \"%s {{1}}\", variables: [when]}\n", n, i, n)
		}
	}
	return b.String()
}

func TestWhatsAppTemplatesAreParsedAndFilled(t *testing.T) {
	f, err := tenants.Parse("tenants.yaml", []byte(withWhatsApp()))
	require.NoError(t, err)
	w := f.Tenants[0].WhatsApp[tenants.German][tenants.TemplateReminder]
	require.Equal(t, "HX0123456789abcdef0123456789abcdef", w.ContentSid)
	vars, body := w.Fill(tenants.MessageData{Service: "Wäsche", When: "Do 03.12. 14:00"}.Fields())
	require.Equal(t, map[string]string{"1": "Wäsche", "2": "Do 03.12. 14:00"}, vars)
	require.Equal(t, "Erinnerung: Wäsche am Do 03.12. 14:00.", body)
}

// TestWhatsAppTemplatesAreChecked: apply refuses templates WhatsApp could
// not send and says which message has none.
func TestWhatsAppTemplatesAreChecked(t *testing.T) {
	const reminder = "reminder: {content_sid: HX0123456789abcdef0123456789abcdef, text: \"Erinnerung: {{1}} am {{2}}.\", variables: [service, when]}"
	cases := []struct {
		name, new, want string
	}{
		{"a message without a template", "", "tenants[0].whatsapp_templates.de: no approved template for reminder"},
		{"a malformed content SID", strings.Replace(reminder, "HX0123", "HY0123", 1),
			"whatsapp_templates.de.reminder.content_sid: must be a Twilio content SID"},
		{"more placeholders than variables", strings.Replace(reminder, "[service, when]", "[service]", 1),
			"whatsapp_templates.de.reminder.variables: the text has 2 placeholders and 1 variables"},
		{"placeholders out of order", strings.Replace(reminder, "{{1}} am {{2}}", "{{2}} am {{1}}", 1),
			"whatsapp_templates.de.reminder.text: placeholders must be {{1}} to {{2}}"},
		{"an unknown field", strings.Replace(reminder, "[service, when]", "[service, price]", 1),
			`whatsapp_templates.de.reminder.variables[1]: unknown field "price"`},
		{"a reply is never outside the window", reminder + "\n        unclear: {content_sid: HXffffffffffffffffffffffffffffffff, text: x}",
			"whatsapp_templates.de.unclear: not a message that can leave outside the 24-hour window"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tenants.Parse("tenants.yaml", []byte(strings.Replace(withWhatsApp(), reminder, c.new, 1)))
			require.ErrorIs(t, err, tenants.ErrRejected)
			require.Contains(t, err.Error(), c.want)
		})
	}
	_, err := tenants.Parse("tenants.yaml", []byte(strings.Replace(withWhatsApp(), "      de:\n", "      en:\n", 1)))
	require.ErrorContains(t, err, "whatsapp_templates: has no templates in the tenant's language de")
}

// TestDemoTenantHasEveryWhatsAppTemplate: the demo shop's file, which
// `make run`, the tests and the drill apply, passes the check.
func TestDemoTenantHasEveryWhatsAppTemplate(t *testing.T) {
	src, err := os.ReadFile("../deploy/tenants.demo.yaml")
	require.NoError(t, err)
	f, err := tenants.Parse("tenants.demo.yaml", src)
	require.NoError(t, err)
	require.Len(t, f.Tenants[0].WhatsApp[tenants.German], len(tenants.WindowTemplates))
}

// TestSendersAreTheTenantsNumbers: each channel's sender must be one of
// the tenant's numbers (the answer comes back to the shop); without one a
// channel sends from the first of them.
func TestSendersAreTheTenantsNumbers(t *testing.T) {
	f, err := tenants.Parse("tenants.yaml", []byte(strings.Replace(valid, `twilio_numbers: ["whatsapp:+4940111111"]`,
		`twilio_numbers: ["whatsapp:+4940111111", "+4940222222"]
    senders: {whatsapp: "whatsapp:+4940111111", sms: "+49 40 222222"}`, 1)))
	require.NoError(t, err)
	shop := f.Tenants[0]
	require.Equal(t, "+4940111111", shop.SenderFor("whatsapp"))
	require.Equal(t, "+4940222222", shop.SenderFor("sms"))
	require.Equal(t, "+4940222222", shop.SenderFor("voice"), "a caller is answered by SMS")
	shop.Senders = tenants.Senders{}
	require.Equal(t, "+4940111111", shop.SenderFor("sms"), "the first number without senders")

	_, err = tenants.Parse("tenants.yaml", []byte(strings.Replace(valid, `twilio_numbers: ["whatsapp:+4940111111"]`,
		`twilio_numbers: ["whatsapp:+4940111111"]
    senders: {sms: "+4940999999"}`, 1)))
	require.ErrorContains(t, err, `tenants[0].senders.sms: "+4940999999" is not one of the tenant's twilio_numbers`)
}

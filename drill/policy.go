package drill

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/twilio"
)

// The drill tenant is the demo tenant with policies that make the
// lifecycle's effects happen within minutes although every drill slot is
// days ahead:
//
//   - a reminder at an offset longer than the time to any drill slot (two
//     years; a 1000-booking drill spans about seven months), so it is
//     already due when a booking is confirmed; the workers' negative
//     REMINDER_LEAD (drillReminderLead) sends a reminder already due at
//     once instead of dropping it, so every booking gets one. One offset,
//     not two: two offsets due at once would send the same words to one
//     number at the same moment, which no real policy does (a day ahead
//     and two hours ahead have different texts) and which a lost answer's
//     reconciliation can only tell apart by order;
//   - a cancellation window of a week, so cancels of the first days'
//     slots keep their deposit and later ones refund it: both sides of the
//     window are exercised;
//   - no quiet hours, which would move reminders due at night.
var drillReminders = []time.Duration{2 * 365 * 24 * time.Hour}

const (
	drillCancellationWindow = 7 * 24 * time.Hour
	// drillReminderLead is the workers' REMINDER_LEAD: reminders overdue
	// by up to ten years are sent at once.
	drillReminderLead = "-87600h"
)

// drillPolicy is the policy the change checks judge by.
func drillPolicy() changePolicy {
	return changePolicy{window: drillCancellationWindow, reminders: drillReminders}
}

// applyDrillTenants applies the demo shop and the second shop
// (shops.go) with the drill's policies and their own calendars (cals),
// and approves their WhatsApp
// templates at the drill's fake Twilio, as each shop had them approved at
// its account. It returns the shops by tenant ID.
func applyDrillTenants(ctx context.Context, pool *pgxpool.Pool, fake *twilio.FakeServer, cals *shopCals) (map[string]tenants.Tenant, error) {
	f, err := tenants.Parse(deploy.DemoFileName, deploy.DemoTenants)
	if err != nil {
		return nil, err
	}
	for i := range f.Tenants {
		pol := &f.Tenants[i].Policies
		pol.Reminders = append([]time.Duration(nil), drillReminders...)
		pol.CancellationWindow = drillCancellationWindow
		pol.QuietHours = nil
	}
	f.Tenants = append(f.Tenants, secondShopOf(f.Tenants[0]))
	for i := range f.Tenants {
		t := &f.Tenants[i]
		t.Resources = slices.Clone(t.Resources) // the second shop's are the first's
		for j, r := range t.Resources {
			t.Resources[j].Calendar = cals.calendar(t.ID, r.ID)
		}
	}
	stack.ApproveTemplates(fake, f.Tenants...)
	if _, err := tenants.Apply(ctx, pool, f, tenants.ApplyOptions{}); err != nil {
		return nil, fmt.Errorf("the drill's shops: %w", err)
	}
	shops := make(map[string]tenants.Tenant, len(f.Tenants))
	for _, t := range f.Tenants {
		shops[t.ID] = t
	}
	return shops, nil
}

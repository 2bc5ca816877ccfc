package lifecycle

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/workflows"
)

// StartAttributes are the search attributes a BookingWorkflow starts
// with: the customer's (workflows.CustomerAttributes in a workflow,
// KeyedAttributes outside one), the channel, Confirmed, the service and
// the slot. The appointment starts its child with them, and whoever else
// opens a lifecycle (the soak's seeder) does the same, so the Web UI and
// the lookups find both alike.
func StartAttributes(customer []temporal.SearchAttributeUpdate, in Input) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(append(customer,
		workflows.ChannelKey.ValueSet(string(in.Channel)),
		workflows.BookingStatusKey.ValueSet(string(workflows.StatusConfirmed)), workflows.ServiceKey.ValueSet(in.Service),
		workflows.SlotStartKey.ValueSet(in.SlotStart.UTC()),
	)...)
}

// Summary is a BookingWorkflow's static summary in the Web UI, with the
// customer's number masked.
func Summary(in Input) string {
	return fmt.Sprintf("Booking %s: %s for %s at %s", in.BookingID, in.Service, mask.Phones(in.Customer), in.SlotStart.UTC().Format(time.RFC3339))
}

package testsupport

import (
	"testing"
	"time"

	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// CustomerKey is number's key with the development secret, the one the
// test stacks' gateways use.
func CustomerKey(t testing.TB, tenant, number string) customerid.Key {
	t.Helper()
	key, err := customerid.Dev().Key(tenant, number)
	if err != nil {
		t.Fatalf("customer key of a test number: %v", err)
	}
	return key
}

// ConversationID is the workflow ID under which a test stack's gateway
// runs number's conversation.
func ConversationID(t testing.TB, tenant, number string) string {
	t.Helper()
	return conversation.WorkflowID(tenant, CustomerKey(t, tenant, number))
}

// AppointmentID is the workflow ID of a test stack's appointment for
// number's wish of service at start (the keyed intent ID).
func AppointmentID(t testing.TB, tenant, number, service string, start time.Time) string {
	t.Helper()
	id, err := workflows.IntentID(tenant, CustomerKey(t, tenant, number), service, "", start)
	if err != nil {
		t.Fatalf("intent ID of a test wish: %v", err)
	}
	return appointment.WorkflowID(tenant, id)
}

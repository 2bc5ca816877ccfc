package testsupport

import (
	"testing"

	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/workflows"
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
	return workflows.ConversationWorkflowID(tenant, CustomerKey(t, tenant, number))
}

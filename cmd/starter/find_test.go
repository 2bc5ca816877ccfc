package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// TestWebhookBookingShowsNoNumberAndFindFindsIt books through a signed
// WhatsApp webhook on the real stack (gateway, worker, calendar and
// payment APIs, in-process Temporal, PostgreSQL). The customer's
// conversation, appointment and booking carry neither the number in their
// workflow IDs nor in any search attribute, only the key and the masked
// number; `starter find --customer` computes the key and lists all three.
func TestWebhookBookingShowsNoNumberAndFindFindsIt(t *testing.T) {
	const token = "find-test-twilio-token"
	cfg := testsupport.Config(t)
	cfg.TwilioAuthToken = token
	pool := testsupport.Database(t)
	tc := temporaltest.Temporal(t)
	cfg.TaskQueue = testsupport.TaskQueue(t)
	cfg.CalendarURL = stacktest.CalendarAPI(t, cfg, pool).URL
	cfg.PaymentsURL = stacktest.PaymentsAPI(t, cfg, pool).URL
	registry := testsupport.Tenants(t, pool)
	testsupport.Worker(t, tc, cfg.TaskQueue, func(r worker.Registry) {
		acts := stack.NewActivities(cfg, pool, registry, tc)
		acts.Temporal = tc
		stack.Register(r, acts)
	})
	gw, _ := stack.Gateway(cfg, pool, tc, registry, stack.Logger(cfg, &bytes.Buffer{}))
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	gw.PublicBaseURL = "https://bookonce.example"
	sim := twilio.Simulator{GatewayURL: srv.URL, PublicBaseURL: gw.PublicBaseURL, AuthToken: token}

	customer := fmt.Sprintf("+49151%08d", time.Now().UnixNano()%100000000)
	digits := customer[len(customer)-8:] // the subscriber part, never shown
	ctx := context.Background()
	_, _, err := sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp("SMfind1", customer, "Reifenwechsel am "+tuesdayText(t)+" um 14 Uhr"))
	require.NoError(t, err)
	testsupport.Eventually(t, 60*time.Second, "the booking confirmed", func() bool {
		var n int
		return pool.QueryRow(ctx, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, customer).Scan(&n) == nil && n == 1
	})

	key := testsupport.CustomerKey(t, "demo", customer)
	var listed map[string]string // workflow type -> ID
	testsupport.Eventually(t, 30*time.Second, "conversation, appointment and booking listed by CustomerKey", func() bool {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf(`CustomerKey = %q`, key)})
		if err != nil {
			return false
		}
		listed = map[string]string{}
		for _, e := range resp.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			require.NotContains(t, id, digits, "workflow ID %s", id)
			for name, p := range e.GetSearchAttributes().GetIndexedFields() {
				require.NotContains(t, string(p.GetData()), digits, "search attribute %s of %s", name, id)
			}
			listed[e.GetType().GetName()] = id
		}
		return len(listed) == 3
	})
	require.Equal(t, conversation.WorkflowID("demo", key), listed["ConversationWorkflow"])
	require.Contains(t, listed, "AppointmentWorkflow")
	require.Contains(t, listed, "BookingWorkflow")
	d, err := tc.DescribeWorkflowExecution(ctx, listed["ConversationWorkflow"], "")
	require.NoError(t, err)
	sa := d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
	require.Contains(t, string(sa[workflows.CustomerMaskedKey.GetName()].GetData()), mask.Phones(customer))
	require.NotContains(t, sa, workflows.CustomerPhoneKey.GetName())

	t.Setenv("TEMPORAL_ADDRESS", temporaltest.HostPort(t))
	t.Setenv("TEMPORAL_TASK_QUEUE", cfg.TaskQueue)
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"find", "--customer", customer}, &stdout, &stderr), "stderr: %s", stderr.String())
	out := stdout.String()
	require.Contains(t, out, "customer "+mask.Phones(customer)+" (key "+string(key)+"): 3 workflow(s)")
	for typ, id := range listed {
		require.Contains(t, out, id, typ)
	}
	require.NotContains(t, out+stderr.String(), digits, "find prints numbers masked")
}

// tuesdayText is next Tuesday as a customer writes it ("2.12."), so the
// wish lies in the future whatever day the test runs.
func tuesdayText(t testing.TB) string {
	d := testsupport.SpokenWeekday(t, time.Tuesday, 14)
	return fmt.Sprintf("%d.%d.", d.Day(), int(d.Month()))
}

// TestFindUsageErrors: find says what is wrong with its command line.
func TestFindUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no customer", []string{"find"}, "--customer is required"},
		{"not a number", []string{"find", "--customer", "12"}, "not a valid phone number"},
		{"number as argument", []string{"find", "+4917099887766"}, `unexpected argument "+49·········66"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, exitUsage, run(c.args, &stdout, &stderr))
			require.Contains(t, stderr.String(), c.want)
			require.Contains(t, stderr.String(), "usage: starter find --customer")
			require.NotContains(t, stderr.String(), "99887766", "the number is masked in errors")
		})
	}
}

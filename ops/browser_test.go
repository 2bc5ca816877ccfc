package ops_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/internal/browser"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/ops"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
)

// chromium finds a Chromium/Chrome binary; the browser test skips only
// when there is none.

const waitWorkflow = "OpsTestWaitForReviewDecision"

// waitForDecision stands in for a booking workflow parked on a review
// case: it completes with the action of the first decision for its case.
func waitForDecision(ctx workflow.Context, caseID string) (review.Action, error) {
	ch := workflow.GetSignalChannel(ctx, workflows.SignalReviewDecision)
	for {
		var d workflows.ReviewDecision
		ch.Receive(ctx, &d)
		if d.CaseID == caseID {
			return d.Action, nil
		}
	}
}

// TestBrowserResolvesCaseAndWorkflowContinues drives the page in headless
// Chromium: sign in with the sign-in form, click "separate" on a potential
// duplicate, see the page come back without the case, and the waiting
// workflow (on the in-process Temporal server) complete with "separate".
func TestBrowserResolvesCaseAndWorkflowContinues(t *testing.T) {
	if browser.Find() == "" {
		t.Skip(browser.ErrNoChromium.Error() + " to run the browser test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	pool := testsupport.Database(t)
	store := &review.Store{Pool: pool}
	tc := temporaltest.Temporal(t)
	queue := testsupport.TaskQueue(t)
	testsupport.Worker(t, tc, queue, func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(waitForDecision, workflow.RegisterOptions{Name: waitWorkflow})
	})

	const caseID = "rc_e2e_dup"
	wfID := "customer:" + tenant + ":" + phone + ":" + queue
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wfID, TaskQueue: queue, WorkflowExecutionTimeout: 2 * time.Minute}, waitWorkflow, caseID)
	require.NoError(t, err)

	_, err = pool.Exec(ctx, `INSERT INTO review_cases (id, tenant_id, workflow_id, reason, details, idempotency_key, created_at) VALUES
		($1, $2, $3, 'potential_duplicate', $4, 'e2e/1', now() - interval '3 minutes'),
		('rc_e2e_unknown', $2, 'appointment:t1:in_42', 'unknown_outcome', '{"step":"payment-authorize","error":"context deadline exceeded"}', 'e2e/2', now() - interval '9 minutes')`,
		caseID, tenant, wfID, `{"intent":{"customer":"`+phone+`","service":"haircut","channel":"whatsapp","slot_start":"2026-12-01T13:00:00Z"},"conflicting_intent":"in_41","conflicting_service":"haircut","conflicting_slot":"2026-12-01T14:00:00Z"}`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO outbox_messages (id, tenant_id, reference, kind, channel, recipient, body, state, attempts, last_error, idempotency_key, created_at) VALUES
		('ob_e2e', $1, 'appointment:t1:in_42', 'confirmation', 'whatsapp', 'whatsapp:`+phone+`', 'Hallo', 'review', 1, 'twilio: message not found after timeout', 'e2e/ob', now() - interval '4 minutes')`, tenant)
	require.NoError(t, err)

	reg := prometheus.NewRegistry()
	dups := prometheus.NewCounterVec(prometheus.CounterOpts{Name: ops.MetricDuplicatesBlocked, Help: "h"}, []string{"layer", "tenant", "route"})
	reg.MustRegister(dups)
	dups.WithLabelValues("inbox", tenant, "/webhooks/twilio/whatsapp").Add(2)
	dups.WithLabelValues("idempotency", tenant, "POST /v1/bookings").Add(1)

	rec := &signals{next: tc}
	page := &ops.Page{
		Pool: pool, Reviews: &review.Resolver{Store: store, Temporal: rec}, Gatherers: []prometheus.Gatherer{reg},
		UIBaseURL: "http://127.0.0.1:8233", Namespace: "default",
		Tokens: ops.StaticTokens{token: tenant},
	}
	srv := httptest.NewServer(page.Handler())
	defer srv.Close()

	bctx, closeBrowser, err := browser.New(ctx, t.TempDir())
	require.NoError(t, err)
	defer closeBrowser()

	row := chromedp.CSS(`tr[id="case-` + caseID + `"]`)
	start := time.Now()
	require.NoError(t, browser.SignIn(bctx, srv.URL+"/ops", token, `tr[id="case-`+caseID+`"]`), "sign in and see the case")
	tenantText, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#tenant")))
	require.NoError(t, err)
	require.Equal(t, tenant, tenantText)
	location, err := chromedp.Run(bctx, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, srv.URL+"/ops", location, "no token in the address bar")

	require.NoError(t, chromedp.Do(bctx,
		chromedp.Click(row+` button[value="separate"]`),
		chromedp.WaitVisible(chromedp.CSS("#notice")),
		chromedp.WaitNotPresent(row),
	), "click separate and see the page come back without the case")
	location, err = chromedp.Run(bctx, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, srv.URL+"/ops?action=separate&resolved="+caseID, location)
	t.Logf("browser: signed in, clicked and reloaded in %s", time.Since(start).Round(time.Millisecond))

	require.Equal(t, []signal{{wfID, review.SignalDecision, review.Decision{CaseID: caseID, Action: review.ActionSeparate}}}, rec.get(), "signalled exactly once")
	c, err := store.Get(ctx, caseID)
	require.NoError(t, err)
	require.Equal(t, "resolved", c.Status)
	require.Equal(t, review.ActionSeparate, c.Resolution)

	// The workflow continues with the reviewer's decision.
	var got review.Action
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, review.ActionSeparate, got)

	if os.Getenv("BOOKONCE_SCREENSHOT") == "1" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)) // quality 100: PNG
		require.NoError(t, err)
		path := filepath.Join("testdata", "ops.png")
		require.NoError(t, os.WriteFile(path, png, 0o644))
		t.Logf("screenshot written to %s (%d bytes)", path, len(png))
	}
}

package stack_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// TestCodecDecodesOnlyTheCallersTenant is the attack: London's staff,
// signed in to the ops page, post the demo shop's encrypted workflow
// input (read from Temporal, as anyone with Web UI access can) to the
// codec server. It must come back still encrypted; London's own input,
// posted in the same request, is decoded.
func TestCodecDecodesOnlyTheCallersTenant(t *testing.T) {
	ctx := context.Background()
	cfg, tc, plain, queue := encryptingStack(t)
	cfg.CodecOrigins = []string{uiOrigin}

	// The tenants' workflows, started the way bookonce names them.
	const londonPhone = "+447700900123"
	msgs := map[string]privateMessage{"demo": {From: privatePhone, Text: privateText}, testsupport.LondonTenant: {From: londonPhone, Text: "MOT on Tuesday"}}
	input := map[string]*commonpb.Payload{}
	for tenant, m := range msgs {
		id := appointment.WorkflowID(tenant, "codec-"+queue)
		run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, privateWorkflow, m)
		require.NoError(t, err)
		require.NoError(t, run.Get(ctx, nil))
		input[tenant] = rawHistory(t, plain, id)[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0]
		require.Equal(t, payloadcrypt.EncodingEncrypted, string(input[tenant].GetMetadata()[payloadcrypt.MetadataEncoding]))
	}

	pool := testsupport.Database(t)
	testsupport.TwoTenants(t, pool)
	gw, _ := stack.Gateway(cfg, pool, plain, testsupport.Tenants(t, pool), stack.Logger(cfg, io.Discard))
	srv := httptest.NewServer(gw.AdminHandler())
	t.Cleanup(srv.Close)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	london := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	require.Equal(t, http.StatusSeeOther, testsupport.OpsSignIn(t, london, srv.URL, testsupport.LondonToken).StatusCode)

	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{input["demo"], input[testsupport.LondonTenant]}})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, srv.URL+payloadcrypt.CodecRoute+"/decode", strings.NewReader(string(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", uiOrigin)
	resp, err := london.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "London still decodes its own: %s", raw)
	var out commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(raw, &out))
	require.Len(t, out.GetPayloads(), 2)
	demo, own := out.GetPayloads()[0], out.GetPayloads()[1]
	require.NotContains(t, string(demo.GetData()), privatePhone, "the demo shop's number is not decoded for London")
	require.Equal(t, payloadcrypt.EncodingEncrypted, string(demo.GetMetadata()[payloadcrypt.MetadataEncoding]), "the demo shop's payload stays encrypted")
	require.Contains(t, string(own.GetData()), londonPhone, "London's own payload is decoded")
}

// TestTenantWorkflowsUseTheTenantsKey: every payload of a tenant's
// workflow (input, activity input and result, failure texts, result) is
// encrypted with that tenant's data key, so only its own ops session (or
// the operators' codec token) decodes them; a workflow whose ID names no
// tenant keeps the master key.
func TestTenantWorkflowsUseTheTenantsKey(t *testing.T) {
	ctx := context.Background()
	_, tc, plain, queue := encryptingStack(t)
	tests := []struct{ name, id, text, key string }{
		{"tenant completes", appointment.WorkflowID("demo", "ok-"+queue), privateText, payloadcrypt.TenantKeyID("test-1", "demo")},
		{"tenant fails", "booking:" + appointment.WorkflowID("demo", "fail-"+queue), "fail", payloadcrypt.TenantKeyID("test-1", "demo")},
		{"no tenant", "reconciler-" + queue, privateText, "test-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: tt.id, TaskQueue: queue}, privateWorkflow, privateMessage{From: privatePhone, Text: tt.text})
			require.NoError(t, err)
			if err := run.Get(ctx, nil); tt.text == "fail" {
				require.ErrorContains(t, err, privatePhone, "the worker's client decodes the tenant's failure")
			} else {
				require.NoError(t, err)
			}
			n := 0
			for _, e := range rawHistory(t, plain, tt.id) {
				for _, id := range encryptedKeyIDs(t, e) {
					require.Equal(t, tt.key, id, "event %s", e.GetEventType())
					n++
				}
			}
			require.GreaterOrEqual(t, n, 3)
		})
	}
}

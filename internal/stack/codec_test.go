package stack_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
)

const (
	privatePhone = "+4915188877766"
	privateText  = "Bitte Dauerwelle am Freitag"
)

// privateMessage is personal data as the product's workflows carry it.
type privateMessage struct{ From, Text string }

// privateWorkflow hands the message to an activity and returns its
// answer, or fails quoting the phone number when the text says so.
func privateWorkflow(ctx workflow.Context, m privateMessage) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var answer string
	err := workflow.ExecuteActivity(ctx, privateActivity, m).Get(ctx, &answer)
	return answer, err
}

func privateActivity(_ context.Context, m privateMessage) (string, error) {
	if m.Text == "fail" {
		return "", temporal.NewNonRetryableApplicationError("no slot for "+m.From, "NoSlot", nil)
	}
	return "Gebucht für " + m.From + ": " + m.Text, nil
}

// encryptingStack is a client dialled by stack.Dial with a fresh payload
// key (cfg), a worker of privateWorkflow on it on its own queue, and a
// client without the codec (plain).
func encryptingStack(t *testing.T) (cfg config.Config, tc, plain client.Client, queue string) {
	t.Helper()
	cfg = codecConfig(t)
	tc, err := stack.Dial(context.Background(), cfg, stack.Logger(cfg, io.Discard))
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	plain = temporaltest.Temporal(t)
	queue = testsupport.TaskQueue(t)
	testsupport.Worker(t, tc, queue, func(r worker.Registry) {
		r.RegisterWorkflow(privateWorkflow)
		r.RegisterActivity(privateActivity)
	})
	return cfg, tc, plain, queue
}

// codecConfig is the test configuration with a fresh payload key.
func codecConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := testsupport.Config(t)
	cfg.TemporalAddress = temporaltest.HostPort(t)
	k := payloadcrypt.Key{ID: "test-1", Secret: make([]byte, payloadcrypt.KeySize)}
	_, err := rand.Read(k.Secret)
	require.NoError(t, err)
	cfg.PayloadCodec, err = payloadcrypt.New([]payloadcrypt.Key{k})
	require.NoError(t, err)
	return cfg
}

// rawHistory is every event of a run as the Temporal server stores it,
// read with a client without the codec.
func rawHistory(t *testing.T, plain client.Client, id string) []*historypb.HistoryEvent {
	t.Helper()
	var events []*historypb.HistoryEvent
	it := plain.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		events = append(events, e)
	}
	return events
}

// TestPayloadsAreEncryptedInTemporal runs workflows through a client and
// worker dialled by stack.Dial with payload keys: the server's history,
// read without the codec, holds neither the phone number nor the text
// (inputs, activity arguments and results, failure messages), every
// payload is encrypted, and the client with the codec reads the original
// result and error.
func TestPayloadsAreEncryptedInTemporal(t *testing.T) {
	ctx := context.Background()
	cfg, tc, plain, queue := encryptingStack(t)

	tests := []struct {
		name, text string
		want       string // the result, or the error text
		fails      bool
	}{
		{"completes", privateText, "Gebucht für " + privatePhone + ": " + privateText, false},
		{"fails", "fail", "no slot for " + privatePhone, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "private-" + tt.name + "-" + queue
			run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, privateWorkflow, privateMessage{From: privatePhone, Text: tt.text})
			require.NoError(t, err)
			var got string
			err = run.Get(ctx, &got)
			if tt.fails {
				require.ErrorContains(t, err, tt.want, "the codec client reads the error text")
			} else {
				require.NoError(t, err)
				require.Equal(t, tt.want, got)
				require.Error(t, plain.GetWorkflow(ctx, id, "").Get(ctx, &got), "without the key the result is unreadable")
			}

			events := rawHistory(t, plain, id)
			payloads := 0
			for _, e := range events {
				raw, err := proto.Marshal(e)
				require.NoError(t, err)
				require.False(t, bytes.Contains(raw, []byte(privatePhone)), "event %s quotes the phone number", e.GetEventType())
				require.False(t, bytes.Contains(raw, []byte("Dauerwelle")), "event %s quotes the text", e.GetEventType())
				payloads += countEncrypted(t, e)
			}
			require.GreaterOrEqual(t, payloads, 3, "input, activity input and result or failure are encrypted payloads")

			started := events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
			dec, err := cfg.PayloadCodec.Decode(started)
			require.NoError(t, err)
			var in privateMessage
			require.NoError(t, converter.GetDefaultDataConverter().FromPayload(dec[0], &in))
			require.Equal(t, privateMessage{From: privatePhone, Text: tt.text}, in)
		})
	}
}

// countEncrypted counts an event's payloads and requires each encrypted.
func countEncrypted(t *testing.T, e *historypb.HistoryEvent) int {
	t.Helper()
	return len(encryptedKeyIDs(t, e))
}

// encryptedKeyIDs are the key IDs of an event's payloads, each required
// to be encrypted.
func encryptedKeyIDs(t *testing.T, e *historypb.HistoryEvent) []string {
	t.Helper()
	var ids []string
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if p, ok := m.Interface().(*commonpb.Payload); ok {
			require.Equal(t, payloadcrypt.EncodingEncrypted, string(p.GetMetadata()[payloadcrypt.MetadataEncoding]), "event %s", e.GetEventType())
			ids = append(ids, string(p.GetMetadata()[payloadcrypt.MetadataKeyID]))
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool { walk(mv.Message()); return true })
			case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
				walk(v.Message())
			}
			return true
		})
	}
	walk(e.ProtoReflect())
	return ids
}

// opsCodecServer is the gateway as GatewayOn assembles it (ops page and
// codec server, the demo tenant's token bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI and London's
// bkapi_LONDONGARAGETESTTOKEN22222T5EVU4A) on a loopback server.
func opsCodecServer(t *testing.T, cfg config.Config) *httptest.Server {
	t.Helper()
	pool := testsupport.Database(t)
	testsupport.TwoTenants(t, pool)
	gw, _ := stack.Gateway(cfg, pool, temporaltest.Temporal(t), testsupport.Tenants(t, pool), stack.Logger(cfg, io.Discard))
	srv := httptest.NewServer(gw.AdminHandler())
	t.Cleanup(srv.Close)
	return srv
}

// codecFixture is the gateway with payload keys and an operator codec
// token on a loopback server, the Web UI's origin allowed, and a payload
// encrypted with the demo tenant's key (enc), London's (london) and the
// master key (global).
type codecFixture struct {
	t                         *testing.T
	srv                       *httptest.Server
	orig, enc, london, global *commonpb.Payload
}

const (
	uiOrigin      = "http://127.0.0.1:8233"
	operatorToken = "codec-operator-token"
)

func newCodecFixture(t *testing.T) *codecFixture {
	cfg := codecConfig(t)
	cfg.CodecOrigins = []string{uiOrigin}
	cfg.CodecOperatorToken = operatorToken
	orig, err := converter.GetDefaultDataConverter().ToPayload(privateMessage{From: privatePhone, Text: privateText})
	require.NoError(t, err)
	encode := func(c converter.PayloadCodec) *commonpb.Payload {
		enc, err := c.Encode([]*commonpb.Payload{orig})
		require.NoError(t, err)
		return enc[0]
	}
	return &codecFixture{t: t, srv: opsCodecServer(t, cfg), orig: orig,
		enc: encode(cfg.PayloadCodec.ForTenant("demo")), london: encode(cfg.PayloadCodec.ForTenant(testsupport.LondonTenant)), global: encode(cfg.PayloadCodec)}
}

// post sends a codec request from the Web UI's origin.
func (f *codecFixture) post(c *http.Client, path string, body []byte, token string) *http.Response {
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+payloadcrypt.CodecRoute+path, bytes.NewReader(body))
	require.NoError(f.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", uiOrigin)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// answer is the one payload of a successful codec answer.
func (f *codecFixture) answer(resp *http.Response) *commonpb.Payload {
	require.Equal(f.t, http.StatusOK, resp.StatusCode)
	require.Equal(f.t, uiOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	var out commonpb.Payloads
	require.NoError(f.t, protojson.Unmarshal(b, &out))
	require.Len(f.t, out.GetPayloads(), 1)
	return out.GetPayloads()[0]
}

// TestCodecServerServesOperators: over a real loopback gateway, the codec
// endpoint decodes and encodes the tenant's payloads for its bearer token
// and for the ops session cookie the Web UI sends, and every payload for
// the operator codec token.
func TestCodecServerServesOperators(t *testing.T) {
	f := newCodecFixture(t)
	t.Run("bearer round trip", func(t *testing.T) {
		require.Equal(t, f.orig.GetData(), f.answer(f.post(f.srv.Client(), "/decode", mustJSON(t, f.enc), "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI")).GetData())
		reenc := f.answer(f.post(f.srv.Client(), "/encode", mustJSON(t, f.orig), "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI"))
		require.Equal(t, payloadcrypt.EncodingEncrypted, string(reenc.GetMetadata()[payloadcrypt.MetadataEncoding]))
		require.Equal(t, payloadcrypt.TenantKeyID("test-1", "demo"), string(reenc.GetMetadata()[payloadcrypt.MetadataKeyID]), "a tenant mints only its own ciphertext")
		require.Equal(t, f.orig.GetData(), f.answer(f.post(f.srv.Client(), "/decode", mustJSON(t, reenc), "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI")).GetData())
	})
	t.Run("a tenant does not decode the master key's payloads", func(t *testing.T) {
		require.Equal(t, f.global.GetData(), f.answer(f.post(f.srv.Client(), "/decode", mustJSON(t, f.global), "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI")).GetData())
	})
	t.Run("operator token decodes every tenant's", func(t *testing.T) {
		for _, p := range []*commonpb.Payload{f.enc, f.london, f.global} {
			require.Equal(t, f.orig.GetData(), f.answer(f.post(f.srv.Client(), "/decode", mustJSON(t, p), operatorToken)).GetData())
		}
		reenc := f.answer(f.post(f.srv.Client(), "/encode", mustJSON(t, f.orig), operatorToken))
		require.Equal(t, "test-1", string(reenc.GetMetadata()[payloadcrypt.MetadataKeyID]))
	})
	t.Run("ops session cookie", func(t *testing.T) {
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp := testsupport.OpsSignIn(t, c, f.srv.URL, "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI") // the form with its login CSRF token, as a browser signs in
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Equal(t, f.orig.GetData(), f.answer(f.post(c, "/decode", mustJSON(t, f.enc), "")).GetData())
	})
}

// TestCodecServerRefuses anonymous callers, tampered payloads and bodies
// that are not payloads, with problem+json that quotes no payload.
func TestCodecServerRefuses(t *testing.T) {
	f := newCodecFixture(t)
	tampered := proto.Clone(f.enc).(*commonpb.Payload)
	tampered.Data[len(tampered.Data)-1] ^= 1
	tests := []struct {
		name, token string
		body        []byte
		status      int
	}{
		{"no token", "", mustJSON(t, f.enc), http.StatusUnauthorized},
		{"wrong token", "guess", mustJSON(t, f.enc), http.StatusUnauthorized},
		{"tampered payload", "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI", mustJSON(t, tampered), http.StatusBadRequest},
		{"not payloads", "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI", []byte(`{"payloads":`), http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.post(f.srv.Client(), "/decode", tt.body, tt.token)
			require.Equal(t, tt.status, resp.StatusCode)
			require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NotContains(t, string(b), privatePhone)
		})
	}
}

// TestCodecServerCORS answers the Web UI's preflight, with credentials
// and the headers the UI sends, and refuses any other origin.
func TestCodecServerCORS(t *testing.T) {
	f := newCodecFixture(t)
	tests := []struct {
		origin string
		status int
		allow  string
	}{
		{uiOrigin, http.StatusNoContent, uiOrigin},
		{"https://evil.example", http.StatusForbidden, ""},
	}
	for _, tt := range tests {
		t.Run(tt.origin, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodOptions, f.srv.URL+payloadcrypt.CodecRoute+"/decode", nil)
			require.NoError(t, err)
			req.Header.Set("Origin", tt.origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "content-type,x-namespace")
			resp, err := f.srv.Client().Do(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, tt.status, resp.StatusCode)
			require.Equal(t, tt.allow, resp.Header.Get("Access-Control-Allow-Origin"))
			if tt.allow == "" {
				return
			}
			require.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
			for _, h := range []string{"Authorization", "Content-Type", "X-Namespace"} {
				require.Contains(t, resp.Header.Get("Access-Control-Allow-Headers"), h)
			}
		})
	}
}

func mustJSON(t *testing.T, p *commonpb.Payload) []byte {
	t.Helper()
	b, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}})
	require.NoError(t, err)
	return b
}

// TestNoCodecServerWithoutKeys: without payload keys the gateway has no
// codec route (the ops page answers 404), as nothing is encrypted.
func TestNoCodecServerWithoutKeys(t *testing.T) {
	cfg := testsupport.Config(t)
	srv := opsCodecServer(t, cfg)
	req, err := http.NewRequest(http.MethodPost, srv.URL+payloadcrypt.CodecRoute+"/decode", strings.NewReader(`{"payloads":[]}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

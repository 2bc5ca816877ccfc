package channels_test

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/twilio"
)

// signals is the Temporal client of an edge gateway: it forwards every
// call and records the customers of SignalWithStart, the one call that
// starts a conversation (and so, possibly, a booking).
type signals struct {
	client.Client
	mu  sync.Mutex
	ids []string
}

func (s *signals) SignalWithStartWorkflow(ctx context.Context, id, name string, arg any, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	return s.Client.SignalWithStartWorkflow(ctx, id, name, arg, o, wf, args...)
}

func (s *signals) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

// edge is a gateway on loopback over its own database and the package's
// Temporal server, without a worker: only what the edge does is under
// test (what it records, answers and hands on).
type edge struct {
	pool    *pgxpool.Pool
	sim     twilio.Simulator
	reg     *prometheus.Registry
	signals *signals
}

func newEdge(t testing.TB) *edge {
	t.Helper()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.TwilioAuthToken = authToken
	cfg.TaskQueue = testsupport.TaskQueue(t)
	sig := &signals{Client: temporaltest.Temporal(t)}
	gw, reg := stack.Gateway(cfg, pool, sig, testsupport.Tenants(t, pool), stack.Logger(cfg, io.Discard))
	gw.PublicBaseURL = "https://bookonce.example"
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return &edge{pool: pool, reg: reg, signals: sig,
		sim: twilio.Simulator{GatewayURL: srv.URL, PublicBaseURL: gw.PublicBaseURL, AuthToken: authToken}}
}

func (e *edge) count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// counter sums the series of family name whose labels include want.
func (e *edge) counter(t testing.TB, name string, want map[string]string) float64 {
	t.Helper()
	got, err := e.reg.Gather()
	require.NoError(t, err)
	mfs := map[string]*dto.MetricFamily{}
	for _, mf := range got {
		mfs[mf.GetName()] = mf
	}
	return value(mfs, name, want)
}

// twiml is the part of a TwiML answer the tests read.
type twiml struct {
	XMLName xml.Name `xml:"Response"`
	Say     []string `xml:"Say"`
	Gather  []struct {
		Action string   `xml:"action,attr"`
		Say    []string `xml:"Say"`
	} `xml:"Gather"`
	Hangup *struct{} `xml:"Hangup"`
	Pause  []struct {
		Length int `xml:"length,attr"`
	} `xml:"Pause"`
	Redirect *struct {
		Method string `xml:"method,attr"`
		URL    string `xml:",chardata"`
	} `xml:"Redirect"`
}

// spoken is everything the answer says, in and outside a Gather.
func (d twiml) spoken() string {
	all := d.Say
	for _, g := range d.Gather {
		all = append(all, g.Say...)
	}
	return strings.Join(all, " ")
}

// gathersStep requires that the answer listens for the sentence of step.
func (d twiml) gathersStep(t testing.TB, step int) {
	t.Helper()
	require.Len(t, d.Gather, 1, "the caller may go on")
	require.Equal(t, fmt.Sprintf("%s?step=%d", channels.RouteVoiceGather, step), d.Gather[0].Action)
}

// parseTwiML requires body to be a well-formed TwiML document.
func parseTwiML(t testing.TB, body string) twiml {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(body))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "well-formed XML: %q", body)
	}
	var doc twiml
	require.NoError(t, xml.Unmarshal([]byte(body), &doc), "a <Response> document: %q", body)
	return doc
}

// asksForWhatsApp: the caller is told, in German, to write on WhatsApp.
func (d twiml) asksForWhatsApp() bool {
	return len(d.Say) == 1 && strings.Contains(d.Say[0], "WhatsApp") && strings.Contains(d.Say[0], "Sie") && d.Hangup != nil
}

// TestMatrix19SignedWebhookIsNeverRefused proves failure-matrix item 19 (a
// correctly signed webhook refused for its content: a withheld caller ID,
// a number the phone library does not know, a body PostgreSQL cannot
// store as is). Every delivery is answered 200 with valid TwiML and
// recorded once in the inbox; a caller without a number is asked to write
// on WhatsApp; nothing is handed to a conversation for a customer who
// cannot be identified; an unknown but well-formed E.164 number is kept
// as it came and handed on.
func TestMatrix19SignedWebhookIsNeverRefused(t *testing.T) {
	t.Parallel()
	e := newEdge(t)
	ctx := context.Background()
	withheld := []string{"anonymous", "Anonymous", "unknown", "+266696687", "", "client:alice", "sip:alice@pbx.example.com", "restricted"}
	type delivery struct {
		name, route string
		form        map[string]string
		eventID     string
		// routed: a conversation gets the event; else the caller is
		// unidentifiable (and, on a call, asked to write on WhatsApp).
		routed   bool
		customer string
		text     string // the text stored, if routed
	}
	var cases []delivery
	for _, from := range withheld {
		sm, ca := twilio.NewSID("SM"), twilio.NewSID("CA")
		cases = append(cases,
			delivery{name: "whatsapp from " + from, route: channels.RouteWhatsApp, eventID: sm,
				form: map[string]string{"MessageSid": sm, "From": "whatsapp:" + from, "Body": "Reifenwechsel Dienstag 14 Uhr"}},
			delivery{name: "whatsapp from bare " + from, route: channels.RouteWhatsApp, eventID: sm + "b",
				form: map[string]string{"MessageSid": sm + "b", "From": from, "Body": "Hallo"}},
			delivery{name: "call from " + from, route: channels.RouteVoice, eventID: ca + ":start",
				form: map[string]string{"CallSid": ca, "From": from, "To": "+4930123456"}},
			delivery{name: "speech from " + from, route: channels.RouteVoiceGather + "?step=1", eventID: ca + ":gather:1",
				form: map[string]string{"CallSid": ca, "From": from, "SpeechResult": "Reifenwechsel am Dienstag um 14 Uhr"}},
		)
	}
	unknownRange := fmt.Sprintf("+999%08d", rand.IntN(100000000)) // well-formed E.164, unknown to the library
	good := newCustomer()
	sm, ca := twilio.NewSID("SM"), twilio.NewSID("CA")
	cases = append(cases,
		delivery{name: "whatsapp from an unknown range", route: channels.RouteWhatsApp, eventID: sm,
			form:   map[string]string{"MessageSid": sm, "From": "whatsapp:" + unknownRange, "Body": "Hallo"},
			routed: true, customer: unknownRange, text: "Hallo"},
		delivery{name: "call from an unknown range", route: channels.RouteVoice, eventID: ca + ":start",
			form: map[string]string{"CallSid": ca, "From": unknownRange}},
		delivery{name: "speech from an unknown range", route: channels.RouteVoiceGather + "?step=1", eventID: ca + ":gather:1",
			form:   map[string]string{"CallSid": ca, "From": unknownRange, "SpeechResult": "Hallo"},
			routed: true, customer: unknownRange, text: "Hallo"},
		delivery{name: "whatsapp body with NUL", route: channels.RouteWhatsApp, eventID: sm + "n",
			form:   map[string]string{"MessageSid": sm + "n", "From": "whatsapp:" + good, "Body": "Reifen\x00wechsel"},
			routed: true, customer: good, text: "Reifen\uFFFDwechsel"},
		delivery{name: "whatsapp body with invalid UTF-8", route: channels.RouteWhatsApp, eventID: sm + "u",
			form:   map[string]string{"MessageSid": sm + "u", "From": "whatsapp:" + good, "Body": "M\xfcller \xc3\x28 14 Uhr"},
			routed: true, customer: good, text: "M\uFFFDller \uFFFD( 14 Uhr"},
		delivery{name: "speech with NUL", route: channels.RouteVoiceGather + "?step=1", eventID: ca + "n:gather:1",
			form:   map[string]string{"CallSid": ca + "n", "From": good, "SpeechResult": "\x00Dienstag"},
			routed: true, customer: good, text: "\uFFFDDienstag"},
		delivery{name: "whatsapp event ID with NUL", route: channels.RouteWhatsApp, eventID: "SM\uFFFD1",
			form: map[string]string{"MessageSid": "SM\x001", "From": "whatsapp:" + good, "Body": "Hallo"}, routed: true, customer: good, text: "Hallo"},
	)

	for _, d := range cases {
		t.Run(d.name, func(t *testing.T) {
			// Twilio always names the number called; here the demo tenant's.
			form := map[string][]string{"To": {"+4930123456"}}
			for k, v := range d.form {
				form[k] = []string{v}
			}
			before := e.signals.count()
			status, body, err := e.sim.Post(ctx, d.route, form)
			require.NoError(t, err)
			require.Equal(t, 200, status, "answer: %s", body)
			doc := parseTwiML(t, body)
			require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = $1`, d.eventID), "one inbox row")

			switch {
			case d.routed:
				// A spoken sentence is answered before it is handed on.
				testsupport.Eventually(t, 10*time.Second, "handed to the customer's conversation", func() bool {
					return e.signals.count() == before+1
				})
				var customer, text string
				require.NoError(t, e.pool.QueryRow(ctx, `SELECT customer, payload->'event'->>'text' FROM inbox_events WHERE event_id = $1`,
					d.eventID).Scan(&customer, &text))
				require.Equal(t, d.customer, customer)
				require.Equal(t, d.text, text, "stored sanitised, the rest kept")
			case d.route == channels.RouteWhatsApp:
				require.Equal(t, before, e.signals.count(), "no conversation for a sender without a number")
			case d.form["From"] == unknownRange:
				require.Len(t, doc.Gather, 1, "a caller with a number is asked for the wish")
			default:
				require.Equal(t, before, e.signals.count(), "no conversation for a caller without a number")
				require.True(t, doc.asksForWhatsApp(), "the caller is asked to write on WhatsApp: %s", body)
			}
		})
	}
	require.Zero(t, e.count(t, `SELECT count(*) FROM booking_intents`), "the edge books nothing itself")
	require.Positive(t, e.counter(t, "bookonce_webhooks_unroutable_total", map[string]string{"channel": "voice", "reason": "withheld"}))
	require.Positive(t, e.counter(t, "bookonce_webhooks_unroutable_total", map[string]string{"channel": "whatsapp", "reason": "withheld"}))
	require.Zero(t, e.counter(t, "bookonce_webhooks_rejected_total", nil), "nothing signed was refused")
}

package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// phoneCall is one phone call on a voice platform, booking through its
// fake sender.
type phoneCall struct {
	// send delivers book_appointment with args as the platform delivers
	// one tool call (again: the same tool call once more); it returns the
	// body the model reads.
	send func(ctx context.Context, args map[string]any) ([]byte, error)
	// reissue is the model calling the tool again for the same wish,
	// under a new tool-call ID where the platform has them.
	reissue func(ctx context.Context, args map[string]any) ([]byte, error)
	// lost delivers once with the first answer lost on the way back, and
	// returns what the platform ends with (its own retry, or an error).
	lost func(ctx context.Context, args map[string]any) ([]byte, error)
	// answer is the booking answer in a body.
	answer func(t *testing.T, body []byte) agent.BookingAnswer
}

// platform starts phone calls on one voice platform.
type platform struct {
	name string
	call func(e env, customer string) phoneCall
}

var platforms = []platform{
	{"vapi", vapiCall},
	{"retell", retellCall},
	{"elevenlabs", elevenLabsCall},
}

// TestPlatformDeliveriesBookOnce: per platform, however it and its model
// deliver one wish (again, three times, at once, after a lost answer,
// re-issued), the customer ends with one booking, one deposit and one
// confirmation, and a redelivery gets the first answer byte for byte.
func TestPlatformDeliveriesBookOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name string
		run  func(t *testing.T, c phoneCall, args map[string]any)
	}{
		{"delivered twice", func(t *testing.T, c phoneCall, args map[string]any) {
			first := deliver(t, c.send, args)
			require.Equal(t, first, deliver(t, c.send, args), "the first answer, byte for byte")
		}},
		{"delivered three times", func(t *testing.T, c phoneCall, args map[string]any) {
			first := deliver(t, c.send, args)
			for range 2 {
				require.Equal(t, first, deliver(t, c.send, args))
			}
		}},
		{"delivered three times at once", func(t *testing.T, c phoneCall, args map[string]any) {
			bodies := make([][]byte, 3)
			var wg sync.WaitGroup
			for i := range bodies {
				wg.Go(func() {
					b, err := c.send(context.Background(), args)
					if err != nil {
						t.Errorf("delivery %d: %v", i, err)
					}
					bodies[i] = b
				})
			}
			wg.Wait()
			for i := range bodies {
				require.Equal(t, agent.StatusConfirmed, c.answer(t, bodies[i]).Status, "delivery %d", i)
				require.Equal(t, bodies[0], bodies[i], "delivery %d", i)
			}
		}},
		{"delivered again after a lost answer", func(t *testing.T, c phoneCall, args map[string]any) {
			if body, err := c.lost(context.Background(), args); err == nil {
				require.Equal(t, body, deliver(t, c.send, args), "the platform's own retry got the stored answer")
			}
			require.Contains(t, []agent.Status{agent.StatusConfirmed, agent.StatusPending}, c.answer(t, deliver(t, c.send, args)).Status)
		}},
		{"re-issued for the same wish", func(t *testing.T, c phoneCall, args map[string]any) {
			first := c.answer(t, deliver(t, c.send, args))
			second := c.answer(t, deliver(t, c.reissue, args))
			require.Equal(t, first.WorkflowID, second.WorkflowID)
			require.Equal(t, agent.StatusConfirmed, second.Status, second.Message)
		}},
	}
	hour := 8
	for _, p := range platforms {
		for _, c := range cases {
			hour++
			day := time.Monday + time.Weekday(hour/17)
			start := testsupport.Slot(t, day, 8+hour%9)
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				customer := newCustomer()
				// The model leaves the customer out: the caller's number is it.
				c.run(t, p.call(e, customer), map[string]any{"service": "oil-change", "start": start.Format(time.RFC3339)})
				e.requireOneBooking(t, customer)
			})
		}
	}
}

func deliver(t *testing.T, send func(context.Context, map[string]any) ([]byte, error), args map[string]any) []byte {
	t.Helper()
	b, err := send(context.Background(), args)
	require.NoError(t, err)
	return b
}

// loseFirst is a transport whose first answer is lost after the server
// acted on the request, as when a connection drops.
type loseFirst struct{ lost atomic.Bool }

func (l *loseFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && l.lost.CompareAndSwap(false, true) {
		resp.Body.Close()
		return nil, errors.New("connection reset by peer")
	}
	return resp, err
}

func vapiCall(e env, customer string) phoneCall {
	v := e.vapi()
	call := v.NewCall(customer)
	id := agent.NewToolCall(agent.ToolBookAppointment, nil).ID
	via := func(v *agent.FakeVapi, id string) func(context.Context, map[string]any) ([]byte, error) {
		return func(ctx context.Context, args map[string]any) ([]byte, error) {
			a, err := v.Send(ctx, call, agent.ToolCall{ID: id, Name: agent.ToolBookAppointment, Args: args})
			return a.Body, err
		}
	}
	lossy := *v
	lossy.Client = &http.Client{Transport: &loseFirst{}}
	return phoneCall{
		send: via(v, id),
		reissue: func(ctx context.Context, args map[string]any) ([]byte, error) {
			return via(v, agent.NewToolCall(agent.ToolBookAppointment, nil).ID)(ctx, args)
		},
		lost: via(&lossy, id), // Vapi does not retry: the error stands
		answer: func(t *testing.T, body []byte) agent.BookingAnswer {
			var out struct {
				Results []struct {
					ToolCallID string `json:"toolCallId"`
					Result     string `json:"result"`
				} `json:"results"`
			}
			require.NoError(t, json.Unmarshal(body, &out), string(body))
			require.Len(t, out.Results, 1)
			return bookingIn(t, []byte(out.Results[0].Result))
		},
	}
}

func retellCall(e env, customer string) phoneCall {
	r := e.retell()
	call := r.NewCall(customer)
	via := func(r *agent.FakeRetell) func(context.Context, map[string]any) ([]byte, error) {
		return func(ctx context.Context, args map[string]any) ([]byte, error) {
			a, err := r.Call(ctx, call, agent.ToolBookAppointment, args)
			return a.Body, err
		}
	}
	lossy := *r
	lossy.Client = &http.Client{Transport: &loseFirst{}}
	return phoneCall{
		send: via(r),
		// Without tool-call IDs, the model calling again differs only in
		// its words: the same slot written in UTC.
		reissue: func(ctx context.Context, args map[string]any) ([]byte, error) { return via(r)(ctx, inUTC(args)) },
		lost:    via(&lossy), // Retell retries the lost call itself
		answer:  func(t *testing.T, body []byte) agent.BookingAnswer { return bookingIn(t, body) },
	}
}

func elevenLabsCall(e env, customer string) phoneCall {
	x := e.elevenLabs()
	conv := x.NewConversation(customer)
	via := func(x *agent.FakeElevenLabs) func(context.Context, map[string]any) ([]byte, error) {
		return func(ctx context.Context, args map[string]any) ([]byte, error) {
			status, body, err := x.Call(ctx, conv, agent.ToolBookAppointment, args)
			if err == nil && status != http.StatusOK {
				err = errors.New(http.StatusText(status) + ": " + string(body))
			}
			return body, err
		}
	}
	lossy := *x
	lossy.Client = &http.Client{Transport: &loseFirst{}}
	return phoneCall{
		send:    via(x),
		reissue: func(ctx context.Context, args map[string]any) ([]byte, error) { return via(x)(ctx, inUTC(args)) },
		lost:    via(&lossy),
		answer:  func(t *testing.T, body []byte) agent.BookingAnswer { return bookingIn(t, body) },
	}
}

// inUTC is args with start written in UTC: another wording of one slot.
func inUTC(args map[string]any) map[string]any {
	start, _ := time.Parse(time.RFC3339, args["start"].(string))
	out := map[string]any{}
	for k, v := range args {
		out[k] = v
	}
	out["start"] = start.UTC().Format(time.RFC3339)
	return out
}

func bookingIn(t *testing.T, body []byte) agent.BookingAnswer {
	t.Helper()
	var b agent.BookingAnswer
	require.NoError(t, json.Unmarshal(body, &b), string(body))
	require.NotEmpty(t, b.Status, string(body))
	return b
}

// TestRetellAndElevenLabsRefuseWhatIsNotTheirs: a Retell call unsigned,
// signed with another key or long ago, and an ElevenLabs call without
// the tenant's token are refused with problem+json and book nothing; an
// ElevenLabs tool configured without the conversation header is told how
// to configure it.
func TestRetellAndElevenLabsRefuseWhatIsNotTheirs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	customer := newCustomer()
	args := map[string]any{"service": "oil-change", "start": testsupport.Slot(t, time.Friday, 10).Format(time.RFC3339)}
	retell := func(change func(r *agent.FakeRetell)) func() (int, []byte) {
		return func() (int, []byte) {
			r := e.retell()
			r.Retries = -1
			change(r)
			a, err := r.Call(context.Background(), r.NewCall(customer), agent.ToolBookAppointment, args)
			require.NoError(t, err)
			return a.Status, a.Body
		}
	}
	cases := []struct {
		name   string
		call   func() (int, []byte)
		status int
	}{
		{"retell unsigned", retell(func(r *agent.FakeRetell) { r.APIKey = "" }), http.StatusUnauthorized},
		{"retell another key", retell(func(r *agent.FakeRetell) { r.APIKey = "key_another0123456789abcdef" }), http.StatusUnauthorized},
		{"retell signed long ago", retell(func(r *agent.FakeRetell) { r.Now = func() time.Time { return time.Now().Add(-time.Hour) } }), http.StatusUnauthorized},
		{"elevenlabs without the token", func() (int, []byte) {
			x := e.elevenLabs()
			x.Token = ""
			status, body, err := x.Call(context.Background(), x.NewConversation(customer), agent.ToolBookAppointment, args)
			require.NoError(t, err)
			return status, body
		}, http.StatusUnauthorized},
		{"elevenlabs without the conversation", func() (int, []byte) {
			x := e.elevenLabs()
			status, body, err := x.Call(context.Background(), agent.ElevenLabsConversation{Caller: customer}, agent.ToolBookAppointment, args)
			require.NoError(t, err)
			return status, body
		}, http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := c.call()
			require.Equal(t, c.status, status, string(body))
			var p struct {
				Status int    `json:"status"`
				Detail string `json:"detail"`
			}
			require.NoError(t, json.Unmarshal(body, &p), string(body))
			require.Equal(t, c.status, p.Status)
			require.NotEmpty(t, p.Detail)
		})
	}
	require.Zero(t, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1`, customer), "nothing booked")
}

package drill

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/config"
)

// agentDoor is where a drill agent sends its tool calls: the HTTP door
// under Idempotency-Keys, or a voice platform's route in that platform's
// wire format (agent.RoutePlatforms).
type agentDoor string

// The doors, a quarter of the agents each.
const (
	doorHTTP       agentDoor = "http"
	doorVapi                 = agentDoor(agent.PlatformVapi)
	doorRetell               = agentDoor(agent.PlatformRetell)
	doorElevenLabs           = agentDoor(agent.PlatformElevenLabs)
)

var agentDoors = []agentDoor{doorHTTP, doorVapi, doorRetell, doorElevenLabs}

// doorOf is a scenario's door, from bits of its seeded phrasing that its
// plan (planOf) does not read, so every door sees every follow-up.
func doorOf(s Scenario) agentDoor { return agentDoors[(s.Phrasing/64)%len(agentDoors)] }

// platformKeys are the keys the tenant's voice platforms sign with.
type platformKeys struct{ vapi, retell string }

// platformFakes are the platforms' senders, posting to the agent tools'
// fault proxy with the tenant's token.
type platformFakes struct {
	vapi   agent.FakeVapi
	retell agent.FakeRetell
	eleven agent.FakeElevenLabs
}

func newPlatformFakes(url, token string, keys platformKeys, tr http.RoundTripper) platformFakes {
	client := &http.Client{Transport: tr} // each platform bounds its own wait
	base := url + agent.RoutePlatforms + "/"
	return platformFakes{
		vapi:   agent.FakeVapi{URL: base + string(agent.PlatformVapi), Token: token, Secret: keys.vapi, Client: client},
		retell: agent.FakeRetell{URL: base + string(agent.PlatformRetell), Token: token, APIKey: keys.retell, Client: client},
		eleven: agent.FakeElevenLabs{URL: base + string(agent.PlatformElevenLabs), Token: token, Client: client},
	}
}

// phoneCall is one caller's call on a voice platform, as the platform
// names it in each of its deliveries.
type phoneCall struct {
	door   agentDoor
	f      *platformFakes
	vapi   agent.VapiCall
	retell agent.RetellCall
	conv   agent.ElevenLabsConversation
}

func (f *platformFakes) call(door agentDoor, customer string) *phoneCall {
	return &phoneCall{door: door, f: f, vapi: f.vapi.NewCall(customer), retell: f.retell.NewCall(customer), conv: f.eleven.NewConversation(customer)}
}

// toolAnswer is one tool call's answer as the model reads it: the tool's
// JSON or an error text; status is the delivery's ("transport" when no
// answer came back).
type toolAnswer struct {
	status string
	out    []byte
	err    string
}

func (a toolAnswer) ok() bool { return a.status == "200" && a.err == "" && len(a.out) > 0 }

// deliver sends calls once, as the platform does: Vapi all of them in one
// tool-calls message; Retell and ElevenLabs one POST each, at once. It
// returns an answer per call and the status of each POST.
func (p *phoneCall) deliver(ctx context.Context, calls []agent.ToolCall) ([]toolAnswer, []string) {
	out := make([]toolAnswer, len(calls))
	if p.door == doorVapi {
		a, err := p.f.vapi.Send(ctx, p.vapi, calls...)
		for i, c := range calls {
			out[i] = vapiAnswer(a, err, c.ID)
		}
		return out, []string{out[0].status}
	}
	posts := make([][]string, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { out[i], posts[i] = p.deliverOne(ctx, c) })
	}
	wg.Wait()
	var all []string
	for _, ps := range posts {
		all = append(all, ps...)
	}
	return out, all
}

// deliverOne is one Retell or ElevenLabs function call; Retell's own
// retries count as posts (their statuses are not told, only the last).
func (p *phoneCall) deliverOne(ctx context.Context, c agent.ToolCall) (toolAnswer, []string) {
	if p.door == doorRetell {
		a, err := p.f.retell.Call(ctx, p.retell, c.Name, c.Args)
		ans := bodyAnswer(a.Status, a.Body, err)
		posts := make([]string, max(a.Attempts, 1))
		for i := range posts {
			posts[i] = "retell_retried"
		}
		posts[len(posts)-1] = ans.status
		return ans, posts
	}
	status, body, err := p.f.eleven.Call(ctx, p.conv, c.Name, c.Args)
	ans := bodyAnswer(status, body, err)
	return ans, []string{ans.status}
}

// bodyAnswer reads a platform answer whose body is the tool's JSON or
// {"error": …} (Retell, ElevenLabs).
func bodyAnswer(status int, body []byte, err error) toolAnswer {
	if err != nil {
		return toolAnswer{status: "transport"}
	}
	a := toolAnswer{status: strconv.Itoa(status)}
	if status != http.StatusOK {
		return a
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		a.err = e.Error
		return a
	}
	a.out = body
	return a
}

// vapiAnswer reads call id's result in Vapi's {"results": […]}.
func vapiAnswer(a agent.VapiAnswer, err error, id string) toolAnswer {
	if err != nil {
		return toolAnswer{status: "transport"}
	}
	t := toolAnswer{status: strconv.Itoa(a.Status)}
	r, found := a.Results[id]
	switch {
	case a.Status != http.StatusOK:
	case !found:
		t.err = "no result for tool call " + id
	case r.Error != "":
		t.err = r.Error
	default:
		t.out = []byte(r.Result)
	}
	return t
}

// ask makes tool calls until each is answered, as the model does on a
// live call: a call that failed, timed out or came back with an error is
// made again after a pause (on Vapi under a new tool-call ID, as the
// model re-plans; Retell and ElevenLabs name a call by its arguments), up
// to agentAttempts deliveries over about 100 s, beyond the lease a killed
// gateway leaves on a key (stack.AgentLease). interrupt, when set, cuts
// the first delivery short after that long, as a caller talking over the
// agent makes the platform drop it.
func (c *agentCustomer) ask(ctx context.Context, p *phoneCall, calls []agent.ToolCall, interrupt time.Duration) []toolAnswer {
	answers := make([]toolAnswer, len(calls))
	open := make([]int, len(calls)) // indexes of the calls still unanswered
	for i := range open {
		open[i] = i
	}
	calls = append([]agent.ToolCall(nil), calls...)
	backoff := 200 * time.Millisecond
	for attempt := 0; attempt < agentAttempts && len(open) > 0; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return answers
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, agentMaxBackoff)
			c.count(func(t *AgentTraffic) { t.KeyRetries += len(open) })
		}
		c.db.wait(ctx)
		batch := make([]agent.ToolCall, len(open))
		for j, i := range open {
			if attempt > 0 && p.door == doorVapi {
				calls[i].ID = agent.NewToolCall(calls[i].Name, nil).ID
			}
			batch[j] = calls[i]
		}
		got, posts, cut := c.deliverOnce(ctx, p, batch, interrupt, attempt)
		c.count(func(t *AgentTraffic) {
			t.Posts += len(posts)
			for _, s := range posts {
				t.PostsByStatus[s]++
			}
			if cut {
				t.Interrupted++
			}
		})
		var still []int
		for j, i := range open {
			answers[i] = got[j]
			if !got[j].ok() {
				still = append(still, i)
			}
		}
		open = still
	}
	return answers
}

// deliverOnce is one delivery; the first one is cut short after interrupt
// when that is set (cut: it was, before an answer came).
func (c *agentCustomer) deliverOnce(ctx context.Context, p *phoneCall, calls []agent.ToolCall, interrupt time.Duration, attempt int) ([]toolAnswer, []string, bool) {
	dctx, cancel := ctx, context.CancelFunc(func() {})
	if attempt == 0 && interrupt > 0 {
		dctx, cancel = context.WithTimeout(ctx, interrupt)
	}
	defer cancel()
	got, posts := p.deliver(dctx, calls)
	return got, posts, dctx.Err() != nil && ctx.Err() == nil
}

// bookByVoice plays one agent scenario on a voice platform: the first
// book_appointment call (cut short by the caller for a third of the
// Vapi and ElevenLabs agents), the follow-up of its plan, and get_booking
// while the answer is pending. The calls carry no customer: the platform
// names the caller and the tools take it. Every answer must name the
// same booking.
func (c *agentCustomer) bookByVoice(ctx context.Context, s Scenario, p agentPlan, door agentDoor, rng *rand.Rand) {
	call := c.voice.call(door, s.Customer)
	w := s.Wishes[0]
	args := func(words bool) map[string]any {
		return map[string]any{"service": w.Service, "start": slotText(w.Start, words, s.Phrasing)}
	}
	first := agent.ToolCall{ID: newCallID(rng), Name: agent.ToolBookAppointment, Args: args(p.phraseFirst)}
	var interrupt time.Duration
	if door != doorRetell && s.Phrasing%3 == 0 { // Retell lets a function call finish
		interrupt = time.Duration(20+rng.IntN(400)) * time.Millisecond
	}
	answers := c.bookCalls(ctx, call, interrupt, first)
	again := first // followSameKey: the same delivery again
	switch p.follow {
	case followNewKey, followParallel:
		again.ID = newCallID(rng)
	case followRephrase:
		again = agent.ToolCall{ID: newCallID(rng), Name: first.Name, Args: args(!p.phraseFirst)}
	}
	switch p.follow {
	case followParallel:
		third := again
		third.ID = newCallID(rng)
		answers = append(answers, c.bookCalls(ctx, call, 0, again, third)...)
	case followSameKey, followNewKey, followRephrase:
		answers = append(answers, c.bookCalls(ctx, call, 0, again)...)
	}
	answers = append(answers, c.follow(ctx, latest(answers), func(ctx context.Context, id string) (agent.BookingAnswer, bool) {
		got := c.ask(ctx, call, []agent.ToolCall{agent.NewToolCall(agent.ToolGetBooking, map[string]any{"id": id})}, 0)
		var a agent.BookingAnswer
		return a, got[0].ok() && json.Unmarshal(got[0].out, &a) == nil
	}))
	c.compare(s, answers)
}

// bookCalls makes book_appointment calls on the platform and counts each
// by its final answer.
func (c *agentCustomer) bookCalls(ctx context.Context, call *phoneCall, interrupt time.Duration, calls ...agent.ToolCall) []agent.BookingAnswer {
	got := c.ask(ctx, call, calls, interrupt)
	out := make([]agent.BookingAnswer, len(got))
	for i, g := range got {
		ok := g.ok() && json.Unmarshal(g.out, &out[i]) == nil
		last := g.status
		if g.err != "" {
			last += " " + strconv.Quote(g.err)
		}
		c.answered(string(call.door)+" "+calls[i].ID, last, ok, out[i])
	}
	return out
}

// voicePlatformSecrets is VOICE_PLATFORM_SECRETS for the drill's run: the
// demo tenant's Vapi and Retell keys, new per run.
func voicePlatformSecrets() (string, error) {
	b, err := json.Marshal(map[string]map[string]string{config.DefaultTenant: {
		string(agent.PlatformVapi): crand.Text(), string(agent.PlatformRetell): crand.Text(),
	}})
	return string(b), err
}

// platformKeys are the keys the drill's voice platforms sign with: the
// ones its gateways were started with.
func (e *env) platformKeys() platformKeys {
	vapi, _ := e.cfg.VoicePlatformSecret(config.DefaultTenant, string(agent.PlatformVapi))
	retell, _ := e.cfg.VoicePlatformSecret(config.DefaultTenant, string(agent.PlatformRetell))
	return platformKeys{vapi: vapi, retell: retell}
}

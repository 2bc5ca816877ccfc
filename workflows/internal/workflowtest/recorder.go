package workflowtest

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
)

// Call is one started activity attempt, as the environment saw it.
type Call struct {
	Saga     string // "appointment" or "payment"
	Activity string
	ID       string
	At       time.Time
}

// String is "Activity ID", the payment saga's prefixed with payment/.
func (c Call) String() string {
	if c.Saga == "payment" {
		return "payment/" + c.Activity + " " + c.ID
	}
	return c.Activity + " " + c.ID
}

// SagaOf names the saga of a workflow ID: "payment" for the deposit saga,
// "appointment" for every other.
func SagaOf(workflowID string) string {
	if strings.HasPrefix(workflowID, "payment:") {
		return "payment"
	}
	return "appointment"
}

// Recorder remembers what a unit test's activities were asked: every
// started attempt in order (Listen), and the key and input of each
// activity execution (Note, from the fakes' mocks).
type Recorder struct {
	mu     sync.Mutex
	calls  []Call
	keys   map[string]string // "<saga>/<activity ID>" -> key the activity sent
	inputs map[string]any    // "<saga>/<activity ID>" -> last input
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{keys: map[string]string{}, inputs: map[string]any{}}
}

// Listen records every activity attempt env starts.
func (r *Recorder) Listen(env *testsuite.TestWorkflowEnvironment) {
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.calls = append(r.calls, Call{Saga: SagaOf(info.WorkflowExecution.ID), Activity: info.ActivityType.Name, ID: info.ActivityID, At: env.Now()})
	})
}

// Note records the key and input of an activity attempt.
func (r *Recorder) Note(ctx context.Context, in any) {
	info := activity.GetInfo(ctx)
	k := SagaOf(info.WorkflowExecution.ID) + "/" + info.ActivityID
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys[k] = activities.KeyOf(ctx)
	r.inputs[k] = in
}

// Key is the idempotency key an activity execution of saga sent.
func (r *Recorder) Key(saga, activityID string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys[saga+"/"+activityID]
}

// Input is the last input an activity execution of saga was given.
func (r *Recorder) Input(saga, activityID string) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inputs[saga+"/"+activityID]
}

// Inputs are the last inputs of every activity execution, by
// "<saga>/<activity ID>".
func (r *Recorder) Inputs() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]any, len(r.inputs))
	for k, v := range r.inputs {
		out[k] = v
	}
	return out
}

// Calls are the started attempts so far, in start order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// Sequence lists the started activities of one saga ("" = both, the
// payment's prefixed with payment/), in start order.
func (r *Recorder) Sequence(saga string) []string {
	out := []string{}
	for _, c := range r.Calls() {
		switch {
		case saga == "":
			out = append(out, c.String())
		case c.Saga == saga:
			out = append(out, c.Activity+" "+c.ID)
		}
	}
	return out
}

// Executions is Sequence with each activity once, however many attempts
// its retry policy made: what a saga decided, not how often a downstream
// was asked.
func (r *Recorder) Executions(saga string) []string {
	out := []string{}
	for _, c := range r.Sequence(saga) {
		if len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	return out
}

// Started are the attempts of one activity type.
func (r *Recorder) Started(activityName string) []Call {
	var out []Call
	for _, c := range r.Calls() {
		if c.Activity == activityName {
			out = append(out, c)
		}
	}
	return out
}

// Step is the step an activity reports for downstreamID: its key and
// attempt, as the real activities fill it.
func Step(ctx context.Context, downstreamID string) activities.Step {
	return activities.Step{Key: activities.KeyOf(ctx), Attempt: activity.GetInfo(ctx).Attempt, DownstreamID: downstreamID}
}

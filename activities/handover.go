package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"

	"github.com/bookonce/bookonce/internal/mask"
)

// Signal names of the move of a conversation from its legacy workflow ID
// (customer:<tenant>:<E.164>) to its keyed one (customer:<tenant>:<key>).
// They live here because the activities send them and package workflows,
// which receives them, imports this one.
const (
	// SignalHandOver asks the legacy conversation to pass its state on.
	SignalHandOver = "hand-over"
	// SignalTakeOver carries that state to the keyed conversation.
	SignalTakeOver = "take-over"
)

// Signaller is the part of the Temporal client the move uses.
type Signaller interface {
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
}

// HandOver is the SignalHandOver payload: where the state goes.
type HandOver struct {
	To string `json:"to"`
}

// TakeOver is the SignalTakeOver payload: the legacy conversation's state
// (a conversation.Input, which this package cannot name).
type TakeOver struct {
	From  string          `json:"from"`
	State json.RawMessage `json:"state"`
}

// AskHandOverInput names the legacy and the keyed conversation.
type AskHandOverInput struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// AskHandOver asks the legacy conversation From to hand its state to To;
// false if no conversation runs under From (the usual case: a customer
// who first wrote after the upgrade, or one already moved).
func (a *Activities) AskHandOver(ctx context.Context, in AskHandOverInput) (bool, error) {
	if a.Temporal == nil {
		// Activities wired without a client (tests of single sagas) run
		// no conversation under a legacy ID; the worker always has one.
		activity.GetLogger(ctx).Warn("ask hand-over: no Temporal client, legacy conversation not checked")
		return false, nil
	}
	err := a.Temporal.SignalWorkflow(ctx, in.From, "", SignalHandOver, HandOver{To: in.To})
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ask %s to hand over: %w", mask.Phones(in.From), err)
	}
	return true, nil
}

// HandOverInput is the legacy conversation's state on its way to To.
type HandOverInput struct {
	Tenant string          `json:"tenant"`
	From   string          `json:"from"`
	To     string          `json:"to"`
	State  json.RawMessage `json:"state"`
}

// HandOverConversation points the open review cases of From at To (a
// person's decision then reaches the conversation that holds the pending
// wish) and signals the state to To. Both steps are idempotent, so a retry
// after a crash between them repeats them harmlessly: To adopts a state
// once (workflows.conversation.adopt merges by event and case IDs).
func (a *Activities) HandOverConversation(ctx context.Context, in HandOverInput) error {
	if a.Temporal == nil || a.Reviews == nil {
		return errors.New("hand over conversation: activities lack Temporal client or review store")
	}
	if _, err := a.Reviews.Repoint(ctx, in.Tenant, in.From, in.To); err != nil {
		return fmt.Errorf("hand over %s: %w", mask.Phones(in.From), err)
	}
	if err := a.Temporal.SignalWorkflow(ctx, in.To, "", SignalTakeOver, TakeOver{From: in.From, State: in.State}); err != nil {
		return fmt.Errorf("hand over %s to %s: %w", mask.Phones(in.From), in.To, err)
	}
	return nil
}

// ForwardInput is a signal the legacy conversation received after it
// handed over, on its way to the keyed conversation.
type ForwardInput struct {
	To     string `json:"to"`
	Signal string `json:"signal"`
	// Arg is the signal's payload as received (an inbound event or a
	// review decision).
	Arg json.RawMessage `json:"arg"`
}

// ForwardSignal passes a late signal on to the keyed conversation; the
// receiver ignores an event ID or case it has seen, so a retry is harmless.
func (a *Activities) ForwardSignal(ctx context.Context, in ForwardInput) error {
	if a.Temporal == nil {
		return errors.New("forward signal: activities have no Temporal client")
	}
	if err := a.Temporal.SignalWorkflow(ctx, in.To, "", in.Signal, in.Arg); err != nil {
		return fmt.Errorf("forward %s to %s: %w", in.Signal, in.To, err)
	}
	return nil
}

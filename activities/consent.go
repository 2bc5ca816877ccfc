package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/consent"
)

// ErrTypeConsentFinal: the consent change cannot be recorded by retrying
// (no store configured, a number that is not E.164).
const ErrTypeConsentFinal = "ConsentFinal"

// RecordConsent stores a customer's STOP or START and reports whether it
// changed what the shop may send them (the conversation acknowledges only
// a change: a second STOP gets no second acknowledgement).
func (a *Activities) RecordConsent(ctx context.Context, in consent.Change) (bool, error) {
	if a.Consent == nil {
		return false, temporal.NewNonRetryableApplicationError("no consent store configured", ErrTypeConsentFinal, nil)
	}
	changed, err := a.Consent.Record(ctx, in)
	if errors.Is(err, consent.ErrInvalid) {
		return false, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeConsentFinal, err)
	}
	if err != nil {
		return false, fmt.Errorf("record consent: %w", err)
	}
	return changed, nil
}

// consentOf reads text as a STOP or START keyword of the tenant (its own,
// or consent.DefaultStop and DefaultStart). Only written channels take
// keywords: a caller who says "Stopp" is interrupting the agent.
func consentOf(channel, text string, stop, start []string) consent.Action {
	if channel != "whatsapp" && channel != "sms" {
		return ""
	}
	action, _ := consent.Match(text, stop, start)
	return action
}

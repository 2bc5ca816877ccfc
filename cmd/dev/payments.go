package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/twilio"
)

// wireWebhooks makes payment links work out of the box: the in-process
// payment API delivers its webhooks to the gateway's /webhooks/stripe,
// signed with a whsec_ secret both share, generated per run unless
// STRIPE_WEBHOOK_SECRET is set (with real Stripe, it must be: `stripe
// listen` prints it). A STRIPE_WEBHOOK_URL that is set is kept.
func wireWebhooks(cfg config.Config) (config.Config, error) {
	if cfg.StripeWebhookSecret == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return cfg, fmt.Errorf("generate a webhook secret: %w", err)
		}
		cfg.StripeWebhookSecret = "whsec_" + hex.EncodeToString(b)
	}
	if cfg.StripeWebhookURL == "" {
		cfg.StripeWebhookURL = "http://" + strings.Replace(cfg.GatewayListen, "0.0.0.0:", "127.0.0.1:", 1) + channels.RouteStripe
	}
	return cfg, nil
}

// printMessages prints every message the dev fake of Twilio accepts, so
// the payment link a customer would get is right there in the terminal.
// It polls the fake (in memory, in this process) until ctx ends.
func printMessages(ctx context.Context, w io.Writer, fake *twilio.FakeServer) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	printed := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		msgs := fake.Messages()
		for _, m := range msgs[printed:] {
			fmt.Fprintf(w, "\n  ✉ message to %s:\n%s\n\n", mask.Phones(m.To), indent(m.Body))
		}
		printed = len(msgs)
	}
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }

// depositNote says how deposits are taken, for the ready banner.
func depositNote(cfg config.Config) string {
	if cfg.DepositMode == config.DepositCard {
		return "test card, authorised at once (DEPOSIT_MODE=card)"
	}
	where := "our payment API, webhooks -> " + cfg.StripeWebhookURL
	if cfg.PaymentsURL == config.StripeAPIURL {
		where = "Stripe (STRIPE_SECRET_KEY); forward its webhooks with `stripe listen --forward-to http://" + cfg.GatewayListen + channels.RouteStripe + "`"
	}
	return "payment links, " + where
}

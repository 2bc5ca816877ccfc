package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// simulateFlags are the flags of "starter simulate".
type simulateFlags struct {
	channel, from, text, sid, gateway string
}

// simulate posts a correctly signed Twilio webhook to the gateway.
func simulate(args []string, stdout, _ io.Writer) error {
	var f simulateFlags
	fs := newFlags("simulate", "--from <E.164> --text <text> [flags]")
	fs.StringVar(&f.channel, "channel", "whatsapp", "whatsapp, sms or voice")
	fs.StringVar(&f.from, "from", "", "customer number, E.164 (e.g. +4915112345678)")
	fs.StringVar(&f.text, "text", "", "what the customer writes or says")
	fs.StringVar(&f.sid, "sid", "", "message or call SID (default: random; repeat one to simulate a redelivery)")
	fs.StringVar(&f.gateway, "gateway", "", "gateway URL (default: http://GATEWAY_LISTEN)")
	if err := parse(fs, args, stdout, nil); err != nil {
		return err
	}
	if f.from == "" || f.text == "" {
		return usageFailure(fs, errors.New("missing --from or --text"))
	}
	if f.channel != "whatsapp" && f.channel != "sms" && f.channel != "voice" {
		return usageFailure(fs, fmt.Errorf("--channel %q: use whatsapp, sms or voice", f.channel))
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	if f.gateway == "" {
		f.gateway = "http://" + cfg.GatewayListen
	}
	sim := twilio.Simulator{GatewayURL: f.gateway, PublicBaseURL: cfg.PublicBaseURL, AuthToken: cfg.TwilioAuthToken}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	route, form, err := f.event(ctx, sim)
	if err != nil {
		return err
	}
	status, body, err := sim.Post(ctx, route, form)
	if err != nil {
		return fmt.Errorf("%w\n(is `make run` running?)", err)
	}
	fmt.Fprintf(stdout, "%s %s -> %d\n%s\n", f.channel, f.sid, status, body)
	if status != http.StatusOK {
		return fmt.Errorf("gateway answered %d", status)
	}
	// The conversation's ID carries the customer key, not the number
	// (docs/privacy.md): the same key the gateway derives.
	key, err := cfg.CustomerKeys().Key(config.DefaultTenant, f.from)
	if err != nil {
		return fmt.Errorf("--from %q: %w", f.from, err)
	}
	fmt.Fprintf(stdout, "\nThe conversation is workflow %s in the Web UI; replies wait in the outbox.\n", conversation.WorkflowID(config.DefaultTenant, key))
	return nil
}

// event is the webhook that carries the customer's text: a WhatsApp
// message, an SMS, or the sentence of a call, whose start it posts first.
func (f *simulateFlags) event(ctx context.Context, sim twilio.Simulator) (string, url.Values, error) {
	if f.channel != "voice" && f.sid == "" {
		f.sid = twilio.NewSID("SM")
	}
	switch f.channel {
	case "whatsapp":
		return channels.RouteWhatsApp, twilio.WhatsApp(f.sid, f.from, f.text), nil
	case "sms":
		return channels.RouteSMS, twilio.SMS(f.sid, f.from, f.text), nil
	}
	if f.sid == "" {
		f.sid = twilio.NewSID("CA")
	}
	status, body, err := sim.Post(ctx, channels.RouteVoice, url.Values{"CallSid": {f.sid}, "From": {f.from}, "To": {"+4930123456"}})
	if err != nil {
		return "", nil, fmt.Errorf("%w\n(is `make run` running?)", err)
	}
	if status != http.StatusOK {
		return "", nil, fmt.Errorf("gateway answered %d: %s", status, body)
	}
	return channels.RouteVoiceGather + "?step=1", twilio.Speech(f.sid, f.from, f.text), nil
}

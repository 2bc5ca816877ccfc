package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"time"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/twilio"
)

// simulate posts a correctly signed Twilio webhook to the gateway.
func simulate(args []string) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	channel := fs.String("channel", "whatsapp", "whatsapp or voice")
	from := fs.String("from", "", "customer number, E.164 (e.g. +4915112345678)")
	text := fs.String("text", "", "what the customer writes or says")
	sid := fs.String("sid", "", "message or call SID (default: random; repeat one to simulate a redelivery)")
	gateway := fs.String("gateway", "", "gateway URL (default: http://GATEWAY_LISTEN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || *text == "" {
		return fmt.Errorf("simulate needs --from and --text (see starter simulate -h)")
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	if *gateway == "" {
		*gateway = "http://" + cfg.GatewayListen
	}
	sim := twilio.Simulator{GatewayURL: *gateway, PublicBaseURL: cfg.PublicBaseURL, AuthToken: cfg.TwilioAuthToken}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var route string
	var form url.Values
	switch *channel {
	case "whatsapp":
		if *sid == "" {
			*sid = twilio.NewSID("SM")
		}
		route, form = channels.RouteWhatsApp, twilio.WhatsApp(*sid, *from, *text)
	case "voice":
		if *sid == "" {
			*sid = twilio.NewSID("CA")
		}
		if status, body, err := sim.Post(ctx, channels.RouteVoice, url.Values{"CallSid": {*sid}, "From": {*from}, "To": {"+4930123456"}}); err != nil {
			return err
		} else if status != 200 {
			return fmt.Errorf("gateway answered %d: %s", status, body)
		}
		route, form = channels.RouteVoiceGather+"?step=1", twilio.Speech(*sid, *from, *text)
	default:
		return fmt.Errorf("--channel %q: use whatsapp or voice", *channel)
	}
	status, body, err := sim.Post(ctx, route, form)
	if err != nil {
		return fmt.Errorf("%w\n(is `make run` running?)", err)
	}
	fmt.Printf("%s %s -> %d\n%s\n", *channel, *sid, status, body)
	if status != 200 {
		return fmt.Errorf("gateway answered %d", status)
	}
	fmt.Printf("\nThe conversation is workflow customer:%s:%s in the Web UI; replies wait in the outbox.\n", config.DefaultTenant, *from)
	return nil
}

// Command gateway serves the Twilio voice and WhatsApp webhooks and the
// payment provider's on GATEWAY_LISTEN (verified, recorded in the inbox,
// handed to their workflow), and the staff's review and booking APIs, ops
// page and /metrics on ADMIN_LISTEN.
package main

import (
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
)

func main() {
	stack.Command("gateway", config.GatewaySecrets, stack.RunGateway)
}

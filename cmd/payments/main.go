// Command payments serves the Stripe-compatible payment API (PaymentIntents
// with manual capture, refunds) with the Idempotency-Key contract.
package main

import (
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
)

func main() {
	stack.Command("payment API", config.PaymentsSecrets, stack.RunPayments)
}

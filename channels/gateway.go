// Package channels is where customers reach bookonce: the webhook gateway
// for Twilio voice and WhatsApp. Webhooks are recorded in an inbox before
// any effect and handed to the customer's conversation workflow.
package channels

import (
	"context"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/web"
)

// Gateway serves the channel webhooks.
type Gateway struct {
	Pool     *pgxpool.Pool
	Temporal client.Client
}

// Handler returns the gateway's routes.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found", "no route "+r.Method+" "+r.URL.Path))
	})
	return mux
}

// Health reports whether PostgreSQL and Temporal answer: without either,
// no webhook can be accepted safely.
func (g *Gateway) Health(ctx context.Context) error {
	if err := g.Pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if _, err := g.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	return nil
}

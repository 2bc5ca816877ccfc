package main

import (
	"context"
	"fmt"
	"io"

	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
)

// dialTemporal connects to the Temporal cluster of cfg; its error hints
// at the usual cause, nothing running.
func dialTemporal(ctx context.Context, cfg config.Config, stderr io.Writer) (client.Client, error) {
	tc, err := stack.Dial(ctx, cfg, stack.Logger(cfg, stderr))
	if err != nil {
		return nil, fmt.Errorf("%w\n(is `make run` running, or TEMPORAL_ADDRESS set?)", err)
	}
	return tc, nil
}

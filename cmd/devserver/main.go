// Command devserver runs only the embedded Temporal server and its Web UI,
// for working on bookonce processes started separately.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/workflows"
)

func main() {
	ctx, stop, cfg, log := stack.Begin()
	defer stop()
	ts, err := devserver.StartTemporal(ctx, devserver.Options{
		Address: cfg.TemporalAddress, DatabaseFile: filepath.Join(cfg.DataDir, "temporal.db"), Namespace: cfg.TemporalNamespace,
		Sync: devserver.Sync(cfg.TemporalDBSync),
	})
	if err != nil {
		stack.Fatal(log, "embedded Temporal server", err)
	}
	defer func() { _ = ts.Stop() }()
	tc, err := stack.Dial(ctx, cfg, log)
	if err != nil {
		stack.Fatal(log, "Temporal", err)
	}
	err = workflows.EnsureSearchAttributes(ctx, tc, cfg.TemporalNamespace)
	tc.Close()
	if err != nil {
		stack.Fatal(log, "search attributes", err)
	}
	ui, err := devserver.StartUI(ctx, ts.HostPort(), "127.0.0.1", cfg.TemporalUIPort, cfg.TemporalNamespace, webUIOptions(cfg)...)
	if err != nil {
		stack.Fatal(log, "Temporal Web UI", err)
	}
	defer ui.Stop()
	fmt.Fprintf(os.Stderr, "Temporal %s, Web UI %s (Ctrl-C stops)\n", ts.HostPort(), ui.URL())
	<-ctx.Done()
}

// webUIOptions configure the Web UI: with payload keys, it decodes
// through the gateway's codec server.
func webUIOptions(cfg config.Config) []devserver.UIOption {
	if cfg.PayloadCodec == nil {
		return nil
	}
	return []devserver.UIOption{devserver.WithCodec(stack.CodecEndpoint(cfg))}
}

package drill

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/bookonce/bookonce/internal/browser"
	"github.com/bookonce/bookonce/internal/config"
)

// screenshot saves a PNG of the gateway's ops page as the drill left it
// (review queue, duplicates blocked per layer, unknown outcomes), taken in
// headless Chromium. Without a browser the drill goes on without it.
func (e *env) screenshot(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "bookonce-drill-browser-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bctx, closeBrowser, err := browser.New(ctx, dir)
	if err != nil {
		return err
	}
	defer closeBrowser()
	token, _ := e.cfg.TokenFor(config.DefaultTenant)
	if err := browser.SignIn(bctx, e.staffURL+"/ops", token, "#tenant"); err != nil {
		return fmt.Errorf("sign in to the ops page: %w", err)
	}
	png, err := browser.Screenshot(bctx, e.staffURL+"/ops", "#tenant")
	if err != nil {
		return fmt.Errorf("screenshot of the ops page: %w", err)
	}
	return os.WriteFile(path, png, 0o644)
}

// Package browser finds a local Chromium and opens headless sessions on
// it with chromedp, for the ops page's browser test and the chaos drill's
// screenshot of the ops page.
package browser

import (
	"context"
	"errors"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// ErrNoChromium says where to get a browser.
var ErrNoChromium = errors.New("no Chromium binary (looked for chromium, chromium-browser, google-chrome): install Debian's chromium package")

// Find returns the path of a Chromium-compatible browser, or "".
func Find() string {
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts a headless browser with its profile in userDataDir and
// returns a chromedp context on it; cancel closes the browser.
func New(ctx context.Context, userDataDir string) (context.Context, context.CancelFunc, error) {
	bin := Find()
	if bin == "" {
		return nil, nil, ErrNoChromium
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		// Nothing but loopback: no update checks or sync reaching out.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(userDataDir),
		chromedp.WindowSize(1280, 1100),
	}
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	return bctx, func() { bcancel(); acancel() }, nil
}

// SignIn opens the ops page at pageURL and signs in with token through its
// sign-in form, as a person does (the token never goes into a URL), then
// waits until the CSS selector of the signed-in page is visible.
func SignIn(ctx context.Context, pageURL, token, selector string) error {
	field := chromedp.CSS(`input[name="token"]`)
	return chromedp.Do(ctx, chromedp.Navigate(pageURL), chromedp.WaitVisible(field),
		chromedp.SendKeys(field, token), chromedp.Submit(field), chromedp.WaitVisible(chromedp.CSS(selector)))
}

// Screenshot loads url and returns a PNG of what the window shows once the
// CSS selector is visible (the top of a long page; its size is set by New).
func Screenshot(ctx context.Context, url, selector string) ([]byte, error) {
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(selector))); err != nil {
		return nil, err
	}
	return chromedp.Run(ctx, chromedp.CaptureScreenshot())
}

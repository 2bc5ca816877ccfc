package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Remote is a prometheus.Gatherer that reads another process's /metrics
// over HTTP. The gateway's ops page uses it in production, where the
// calendar, the payment API and the workers keep their counters (the
// idempotency, dedup and outbox layers) in processes of their own.
type Remote struct {
	// URL is the full /metrics address, e.g. http://calendar:8081/metrics.
	URL string
	// Timeout bounds one scrape (default 2 s): a slow process must not
	// hold up the page.
	Timeout time.Duration
	// Client defaults to http.DefaultClient.
	Client *http.Client
}

// Gather fetches and parses the remote text exposition.
func (r Remote) Gather() ([]*dto.MetricFamily, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultStateTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", r.URL, err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	client := r.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", r.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: HTTP %d", r.URL, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", r.URL, err)
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]*dto.MetricFamily, 0, len(names))
	for _, name := range names {
		out = append(out, families[name])
	}
	return out, nil
}

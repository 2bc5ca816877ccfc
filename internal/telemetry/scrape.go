package telemetry

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

// ReplicaScheme prefixes an OPS_SCRAPE_URLS entry whose host names every
// replica of a process (a Kubernetes headless Service): "dns+http://
// bookonce-worker-replicas:8083/metrics" is scraped once per address the
// name resolves to. A plain Service name reaches one pod per scrape, which
// would show one replica's counters as the whole.
const ReplicaScheme = "dns+"

// Replicas is a scrape target that stands for every address its host
// resolves to, looked up again at each scrape (replicas come and go).
type Replicas struct {
	// URL is the /metrics address without the ReplicaScheme prefix.
	URL string
	// Timeout bounds the lookup and each scrape (default 2 s).
	Timeout time.Duration
	// Lookup resolves a host to addresses; nil means the system resolver.
	Lookup func(ctx context.Context, host string) ([]string, error)
}

// ScrapeTarget returns the gatherer of one OPS_SCRAPE_URLS entry: a
// Replicas for a ReplicaScheme entry, else a Remote.
func ScrapeTarget(entry string) prometheus.Gatherer {
	if u, ok := strings.CutPrefix(entry, ReplicaScheme); ok {
		return Replicas{URL: u}
	}
	return Remote{URL: entry}
}

// Expand resolves the host and returns one Remote per address, so that a
// reader can tell the replicas' registries apart (the ops page counts
// each registry once).
func (r Replicas) Expand() ([]prometheus.Gatherer, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("scrape %s%s: %w", ReplicaScheme, r.URL, err)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultStateTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	lookup := r.Lookup
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	addrs, err := lookup(ctx, u.Hostname())
	if err != nil {
		return nil, fmt.Errorf("scrape %s%s: resolve replicas: %w", ReplicaScheme, r.URL, err)
	}
	sort.Strings(addrs)
	out := make([]prometheus.Gatherer, 0, len(addrs))
	for _, a := range addrs {
		one := *u
		one.Host = net.JoinHostPort(a, u.Port())
		out = append(out, Remote{URL: one.String(), Timeout: r.Timeout})
	}
	return out, nil
}

// Gather merges every replica's metrics (prometheus.Gatherers rules: the
// same series from two replicas is an error). Readers that sum counters
// over replicas call Expand instead.
func (r Replicas) Gather() ([]*dto.MetricFamily, error) {
	gs, err := r.Expand()
	if err != nil {
		return nil, err
	}
	return prometheus.Gatherers(gs).Gather()
}

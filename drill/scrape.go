package drill

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
)

// carriedFamily is the counter family a remote service's incarnations
// carry over: the duplicates its idempotency layer blocked. The rest of a
// killed process's metrics dies with it, as in production.
const carriedFamily = "bookonce_duplicates_blocked_total"

// remoteGatherer reads the /metrics of a service running in a child
// process. Counters of one incarnation die with it, so before the drill
// kills it, save adds what it counted so far to what later Gathers report:
// the figure of the report covers every incarnation (minus what one
// counted after its last save, at most one kill interval's worth).
type remoteGatherer struct {
	url string

	mu      sync.Mutex
	carried map[string]*dto.Metric // by label signature
}

func newRemoteGatherer(addr string) *remoteGatherer {
	return &remoteGatherer{url: "http://" + addr + "/metrics", carried: map[string]*dto.Metric{}}
}

// Gather never fails: a service that is down (killed, in an outage) shows
// what its earlier incarnations counted.
func (g *remoteGatherer) Gather() ([]*dto.MetricFamily, error) {
	families, _ := g.scrape()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.carried) == 0 {
		return families, nil
	}
	var fam *dto.MetricFamily
	for _, f := range families {
		if f.GetName() == carriedFamily {
			fam = f
		}
	}
	if fam == nil {
		fam = &dto.MetricFamily{Name: proto.String(carriedFamily), Type: dto.MetricType_COUNTER.Enum()}
		families = append(families, fam)
	}
	seen := map[string]bool{}
	for _, m := range fam.Metric {
		sig := signature(m)
		seen[sig] = true
		if c := g.carried[sig]; c != nil {
			m.Counter = &dto.Counter{Value: proto.Float64(m.GetCounter().GetValue() + c.GetCounter().GetValue())}
		}
	}
	for sig, c := range g.carried {
		if !seen[sig] {
			fam.Metric = append(fam.Metric, proto.Clone(c).(*dto.Metric))
		}
	}
	return families, nil
}

// save adds the running incarnation's carried counters to the total; the
// drill calls it right before a kill.
func (g *remoteGatherer) save() {
	if g == nil {
		return
	}
	families, err := g.scrape()
	if err != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, f := range families {
		if f.GetName() != carriedFamily {
			continue
		}
		for _, m := range f.Metric {
			sig := signature(m)
			if c := g.carried[sig]; c != nil {
				c.Counter.Value = proto.Float64(c.GetCounter().GetValue() + m.GetCounter().GetValue())
			} else {
				g.carried[sig] = m
			}
		}
	}
}

func (g *remoteGatherer) scrape() ([]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %d", g.url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	byName, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", g.url, err)
	}
	out := make([]*dto.MetricFamily, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, nil
}

func signature(m *dto.Metric) string {
	parts := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

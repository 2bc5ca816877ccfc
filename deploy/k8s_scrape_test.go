package deploy

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/bookonce/bookonce/internal/telemetry"
)

// scrapedComponents are the processes whose counters the ops page sums:
// every replica of each must be scraped, or the duplicate counters
// under-report as soon as a Deployment scales.
var scrapedComponents = []string{"calendar", "payments", "worker", "gateway"}

// checkScrapeEveryReplica: the gateway's OPS_SCRAPE_URLS names, for each
// scraped component, a headless Service ("dns+", clusterIP None) that
// selects that component's pods on a port their container declares.
func checkScrapeEveryReplica(m *manifests) (out problems) {
	i := slices.IndexFunc(m.deployments, func(d appsv1.Deployment) bool { return d.Name == "bookonce-gateway" })
	if i < 0 {
		return problems{"no Deployment bookonce-gateway"}
	}
	var entries []string
	for _, e := range m.deployments[i].Spec.Template.Spec.Containers[0].Env {
		if e.Name == "OPS_SCRAPE_URLS" {
			entries = strings.Split(e.Value, ",")
		}
	}
	covered := map[string]bool{}
	for _, entry := range entries {
		raw, ok := strings.CutPrefix(entry, telemetry.ReplicaScheme)
		u, err := url.Parse(raw)
		if !ok || err != nil {
			out.addf("OPS_SCRAPE_URLS entry %q: want %s and a headless Service, which reaches every replica", entry, telemetry.ReplicaScheme)
			continue
		}
		s := slices.IndexFunc(m.services, func(s corev1.Service) bool { return s.Name == u.Hostname() })
		if s < 0 || m.services[s].Spec.ClusterIP != corev1.ClusterIPNone {
			out.addf("OPS_SCRAPE_URLS entry %q: %s is not a headless Service of this build", entry, u.Hostname())
			continue
		}
		comp, ok := m.scrapedBy(m.services[s], u.Port())
		if !ok {
			out.addf("OPS_SCRAPE_URLS entry %q: Service %s selects no pods that declare port %s", entry, u.Hostname(), u.Port())
		}
		covered[comp] = true
	}
	for _, c := range scrapedComponents {
		if !covered[c] {
			out.addf("OPS_SCRAPE_URLS scrapes no replica of the %s", c)
		}
	}
	return out
}

// scrapedBy returns the component whose pods s selects on a Service port
// numbered port whose target the container declares.
func (m *manifests) scrapedBy(s corev1.Service, port string) (string, bool) {
	for _, d := range m.deployments {
		if len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			continue
		}
		for _, p := range s.Spec.Ports {
			if port == strconv.Itoa(int(p.Port)) && declares(d.Spec.Template.Spec.Containers[0], p.TargetPort) {
				return d.Spec.Template.Labels["app.kubernetes.io/component"], true
			}
		}
	}
	return "", false
}

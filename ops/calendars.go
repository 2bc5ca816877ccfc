package ops

import (
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/bookonce/bookonce/shopcal"
)

// calendarRow is one resource's own calendar at the shop, as the workers'
// mirror of it stands (package shopcal).
type calendarRow struct {
	Resource string
	// LastSync is when it was last mirrored whole (zero: never since the
	// workers started); Age says how long ago.
	LastSync time.Time
	Age      string
	// Failing: the last read failed (a calendar_connection case says why
	// when it refused for good).
	Failing bool
	// PushUntil is when its push channel expires (renewed before); zero:
	// it is polled only.
	PushUntil time.Time
}

// gatherCalendars keeps the mirror's gauges of every registry: per
// resource the latest sync any worker made, and failing if any worker's
// last read failed.
func gatherCalendars(values map[string]float64, mf *dto.MetricFamily) {
	for _, m := range mf.GetMetric() {
		k := key("cal", label(m, "tenant"), label(m, "resource"), mf.GetName())
		values[k] = max(values[k], m.GetGauge().GetValue())
	}
}

// calendars lists the tenant's resources with a calendar the workers
// mirror, failing ones first.
func calendars(values map[string]float64, tenant string, now time.Time) []calendarRow {
	rows := map[string]*calendarRow{}
	for k, x := range values {
		parts := strings.Split(k, "\x00")
		if len(parts) != 4 || parts[0] != "cal" || parts[1] != tenant {
			continue
		}
		r := rows[parts[2]]
		if r == nil {
			r = &calendarRow{Resource: parts[2], Age: "never"}
			rows[parts[2]] = r
		}
		switch parts[3] {
		case shopcal.MetricLastSync:
			if x > 0 {
				r.LastSync = time.Unix(int64(x), 0).UTC()
				r.Age = now.Sub(r.LastSync).Truncate(time.Second).String() + " ago"
			}
		case shopcal.MetricFailing:
			r.Failing = x > 0
		case shopcal.MetricPush:
			if x > 0 {
				r.PushUntil = time.Unix(int64(x), 0).UTC()
			}
		}
	}
	out := make([]calendarRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Failing != out[j].Failing {
			return out[i].Failing
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

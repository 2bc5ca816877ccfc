package stack

import (
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/retention"
)

// RetentionSweeper builds the sweep that redacts personal data older than
// BOOKONCE_RETENTION (package retention), counting on reg. The worker
// runs it every RECONCILE_INTERVAL; of several workers, one sweeps at a
// time (an advisory lock).
func RetentionSweeper(cfg config.Config, pool *pgxpool.Pool, reg prometheus.Registerer, log *slog.Logger) *retention.Sweeper {
	return &retention.Sweeper{
		Pool: pool, Retention: cfg.Retention, Metrics: retention.NewMetrics(reg),
		Log: log.With("component", "retention"),
	}
}

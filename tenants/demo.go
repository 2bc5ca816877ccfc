package tenants

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/deploy"
)

// DemoFileName names the demo tenants file in messages.
const DemoFileName = "deploy/tenants.demo.yaml"

// ApplyDemo applies deploy/tenants.demo.yaml, the demo tenant that fresh
// development, test, drill and benchmark databases book at (migrations no
// longer seed it).
func ApplyDemo(ctx context.Context, pool *pgxpool.Pool, opts ApplyOptions) (Diff, error) {
	f, err := Parse(DemoFileName, deploy.DemoTenants)
	if err != nil {
		return Diff{}, err
	}
	return Apply(ctx, pool, f, opts)
}

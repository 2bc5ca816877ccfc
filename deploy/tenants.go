package deploy

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/tenants"
)

// DemoTenants is tenants.demo.yaml: the demo tenant (bays bay-1 and bay-2,
// technician tech-anna; tire-change, inspection, oil-change; a 20 EUR
// deposit; Europe/Berlin, German; the token bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI and the number
// +4930123456). Every fresh development or test database gets it through
// ApplyDemoTenants; migrations no longer seed it.
//
//go:embed tenants.demo.yaml
var DemoTenants []byte

// DemoFileName names the demo tenants file in messages.
const DemoFileName = "deploy/tenants.demo.yaml"

// ApplyDemoTenants applies DemoTenants, the demo tenant that fresh
// development, test, drill and benchmark databases book at. It lives
// here, beside the file, so that package tenants (the format and the
// registry) does not depend on a deployment's files.
func ApplyDemoTenants(ctx context.Context, pool *pgxpool.Pool, opts tenants.ApplyOptions) (tenants.Diff, error) {
	f, err := tenants.Parse(DemoFileName, DemoTenants)
	if err != nil {
		return tenants.Diff{}, err
	}
	return tenants.Apply(ctx, pool, f, opts)
}

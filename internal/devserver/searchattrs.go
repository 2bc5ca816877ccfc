package devserver

import (
	"context"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/server/common/dynamicconfig"
	"google.golang.org/grpc"
)

// searchAttributesSettle is how long after a search attribute is added
// the server reads search attributes through to its store. With SQL
// visibility (this server's only kind) an add maps the new names onto
// columns the cluster metadata preallocates, in the namespace's record
// (frontend's addSearchAttributesSQL); every service re-reads that
// record every 2 s (system.namespaceCacheRefreshInterval). 10 s covers
// that five times over.
const searchAttributesSettle = 10 * time.Second

// freshSearchAttributes makes a newly added search attribute count at
// once, as a bookonce worker needs when it registers its attributes on a
// new server and starts workflows carrying them right after. Temporal's
// switch for that, system.forceSearchAttributesCacheRefreshOnRead, reads
// the cluster metadata and the namespace from the store on every use of
// a search attribute: about 170 reads a booking, a seventh of the
// queries the PostgreSQL-backed server made (docs/benchmarks.md,
// "Where the PostgreSQL backend's time goes"), and Temporal says it is
// not for production. So it is on only for searchAttributesSettle after
// each AddSearchAttributes; a server whose attributes exist already
// reads them once into its cold caches.
type freshSearchAttributes struct {
	config *dynamicconfig.MemoryClient
	settle time.Duration
}

// intercept turns the read-through on before an AddSearchAttributes call
// runs and off searchAttributesSettle after it returns (each call holds
// its own override, so overlapping ones keep it on until the last ends).
func (f freshSearchAttributes) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if info.FullMethod != operatorservice.OperatorService_AddSearchAttributes_FullMethodName {
		return handler(ctx, req)
	}
	off := f.config.OverrideSetting(dynamicconfig.ForceSearchAttributesCacheRefreshOnRead, true)
	defer time.AfterFunc(f.settle, off)
	return handler(ctx, req)
}

// memoryConfig is static as a dynamic config client whose values can be
// overridden while the server runs.
func memoryConfig(static dynamicconfig.StaticClient) *dynamicconfig.MemoryClient {
	c := dynamicconfig.NewMemoryClient()
	for key, value := range static {
		c.OverrideValue(key, value)
	}
	return c
}

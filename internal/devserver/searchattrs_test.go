package devserver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"google.golang.org/grpc"
)

// TestFreshSearchAttributesReadThroughOnlyAfterAnAdd: the server reads
// search attributes through to its store while an AddSearchAttributes
// call runs and for the settle time after it, and never for other calls.
func TestFreshSearchAttributesReadThroughOnlyAfterAnAdd(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		duringOn bool
	}{
		{"adding a search attribute", operatorservice.OperatorService_AddSearchAttributes_FullMethodName, true},
		{"starting a workflow", workflowservice.WorkflowService_StartWorkflowExecution_FullMethodName, false},
		{"listing search attributes", operatorservice.OperatorService_ListSearchAttributes_FullMethodName, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := memoryConfig(serverDynamicConfig())
			readThrough := dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Get(dynamicconfig.NewCollection(dc, log.NewNoopLogger()))
			require.False(t, readThrough(), "off before any call")
			settle := 50 * time.Millisecond
			var during bool
			_, err := freshSearchAttributes{config: dc, settle: settle}.intercept(context.Background(), nil,
				&grpc.UnaryServerInfo{FullMethod: tt.method}, func(context.Context, any) (any, error) {
					during = readThrough()
					return nil, nil
				})
			require.NoError(t, err)
			require.Equal(t, tt.duringOn, during, "while the call runs")
			require.Equal(t, tt.duringOn, readThrough(), "right after the call")
			require.Eventually(t, func() bool { return !readThrough() }, 10*settle, settle/5, "off once settled")
		})
	}
}

// TestMemoryConfigKeepsTheStaticValues: the overridable client serves
// every value of the static configuration it was made from.
func TestMemoryConfigKeepsTheStaticValues(t *testing.T) {
	static := serverDynamicConfig()
	dc := memoryConfig(static)
	for key, want := range static {
		require.Equal(t, want, dc.GetValue(key), key.String())
	}
}

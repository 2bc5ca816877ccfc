package devserver

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/server/common/dynamicconfig"
	"go.yaml.in/yaml/v3"
)

// TestComposeDynamicConfigIsDockerYAML: the server the bench starts on
// PostgreSQL runs with what compose gives the official image.
func TestComposeDynamicConfigIsDockerYAML(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/temporal/dynamicconfig/docker.yaml")
	require.NoError(t, err)
	var file map[string][]struct {
		Value any `yaml:"value"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &file))
	want := map[string]any{}
	for key, values := range file {
		require.Len(t, values, 1, key)
		want[dynamicconfig.MakeKey(key).String()] = values[0].Value
	}
	got := map[string]any{}
	for key, values := range composeDynamicConfig() {
		cv, ok := values.([]dynamicconfig.ConstrainedValue)
		require.True(t, ok, key.String())
		require.Len(t, cv, 1, key.String())
		got[key.String()] = cv[0].Value
	}
	require.Equal(t, want, got)
}

// TestComposeMemoryLimitIsTheServers: compose gives the official image
// the soft memory limit the server on PostgreSQL here runs with.
func TestComposeMemoryLimitIsTheServers(t *testing.T) {
	raw, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &compose))
	limit, ok := compose.Services["temporal"].Environment["GOMEMLIMIT"]
	require.True(t, ok, "compose's temporal service sets GOMEMLIMIT")
	mib, found := strings.CutSuffix(limit, "MiB")
	require.True(t, found, "GOMEMLIMIT %q in MiB", limit)
	n, err := strconv.ParseInt(mib, 10, 64)
	require.NoError(t, err, limit)
	require.Equal(t, int64(ComposeMemoryLimit), n<<20, "compose's GOMEMLIMIT %s against devserver.ComposeMemoryLimit", limit)
}

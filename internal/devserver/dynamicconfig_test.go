package devserver

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/server/common/dynamicconfig"
	"go.yaml.in/yaml/v3"
)

// TestComposeDynamicConfigIsDockerYAML: the server the bench starts on
// PostgreSQL runs with what compose gives the official image, the one key
// the bench needs besides (search attributes counting at once).
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
		if key == dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key() {
			continue
		}
		cv, ok := values.([]dynamicconfig.ConstrainedValue)
		require.True(t, ok, key.String())
		require.Len(t, cv, 1, key.String())
		got[key.String()] = cv[0].Value
	}
	require.Equal(t, want, got)
}

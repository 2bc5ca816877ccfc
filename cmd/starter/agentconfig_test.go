package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
)

// TestAgentConfigPointsEachPlatformAtItsRoute: per platform, the printed
// configuration is JSON with the six voice tools, each calling the
// platform's route on the given URL with its schema, and a placeholder in
// the token's place; a wrong platform, URL or language is a usage error.
func TestAgentConfigPointsEachPlatformAtItsRoute(t *testing.T) {
	const base = "https://agent.werkstatt.example"
	cases := []struct {
		platform string
		url      func(tool map[string]any) string
	}{
		{"vapi", func(m map[string]any) string { return m["server"].(map[string]any)["url"].(string) }},
		{"retell", func(m map[string]any) string { return m["url"].(string) }},
		{"elevenlabs", func(m map[string]any) string { return m["api_schema"].(map[string]any)["url"].(string) }},
	}
	for _, c := range cases {
		t.Run(c.platform, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, exitOK, run([]string{"agent-config", "--platform", c.platform, "--url", base + "/"}, &stdout, &stderr), stderr.String())
			var tools []map[string]any
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &tools), stdout.String())
			require.Len(t, tools, 6)
			for _, tool := range tools {
				require.True(t, strings.HasPrefix(c.url(tool), base+agent.RoutePlatforms+"/"+c.platform), c.url(tool))
			}
			require.Contains(t, stdout.String(), agent.TokenPlaceholder)
			require.Contains(t, stdout.String(), `"book_appointment"`)
		})
	}
	for _, args := range [][]string{
		{"agent-config", "--platform", "bland", "--url", base},
		{"agent-config", "--platform", "vapi", "--url", "http://agent.example"},
		{"agent-config", "--platform", "vapi"},
		{"agent-config", "--url", base},
		{"agent-config", "--platform", "vapi", "--url", base, "--lang", "fr"},
	} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, exitUsage, run(args, &stdout, &stderr), strings.Join(args, " "))
		require.Contains(t, stderr.String(), "usage: starter agent-config", strings.Join(args, " "))
	}
}

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// VoicePlatforms are the voice-agent platforms whose tool calls the agent
// listener takes (package agent has an adapter for each).
var VoicePlatforms = []string{"vapi", "retell"}

// minPlatformSecret is the shortest platform secret taken: a shop types
// it into the platform's dashboard, so it is a random string, not a
// password someone can guess.
const minPlatformSecret = 24

// ParseVoicePlatformSecrets parses VOICE_PLATFORM_SECRETS, a JSON object
// of tenant -> platform -> secret ({"demo": {"vapi": "…"}}): what each
// shop's voice-agent platform signs its tool calls with. JSON, because a
// platform's key may hold any character. A secret shared by two tenants
// is refused (whoever holds it could call the other's tools), and no
// message names a secret.
func ParseVoicePlatformSecrets(raw string) (map[string]map[string]string, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var m map[string]map[string]string
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, errors.New(`VOICE_PLATFORM_SECRETS must be a JSON object of tenant -> platform -> secret, e.g. {"demo": {"vapi": "…"}}`)
	}
	owner := map[string]string{} // secret -> tenant
	for _, tenant := range slices.Sorted(maps.Keys(m)) {
		if !webhookTenant.MatchString(tenant) {
			return nil, fmt.Errorf("VOICE_PLATFORM_SECRETS: %q is not a tenant ID (lower-case letters, digits, '-' and '_')", tenant)
		}
		for _, p := range slices.Sorted(maps.Keys(m[tenant])) {
			secret := m[tenant][p]
			switch {
			case !slices.Contains(VoicePlatforms, p):
				return nil, fmt.Errorf("VOICE_PLATFORM_SECRETS: tenant %q names platform %q; the platforms are %s", tenant, p, strings.Join(VoicePlatforms, ", "))
			case len(secret) < minPlatformSecret:
				return nil, fmt.Errorf("VOICE_PLATFORM_SECRETS: the %s secret of tenant %q is shorter than %d characters: use a random one (openssl rand -hex 24)", p, tenant, minPlatformSecret)
			case owner[secret] != "" && owner[secret] != tenant:
				return nil, fmt.Errorf("VOICE_PLATFORM_SECRETS: tenants %q and %q have the same secret: each could call the other's tools", owner[secret], tenant)
			}
			owner[secret] = tenant
		}
	}
	return m, nil
}

// VoicePlatformSecret is the secret tenant configured for platform.
func (c Config) VoicePlatformSecret(tenant, platform string) (string, bool) {
	s, ok := c.VoicePlatformSecrets[tenant][platform]
	return s, ok && s != ""
}

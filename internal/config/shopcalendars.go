package config

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/bookonce/bookonce/shopcal"
)

// ParseShopCalendarSecrets parses SHOP_CALENDAR_SECRETS, a JSON object of
// secret name -> password ({"werkstatt-dav": "…"}), the credentials of the
// shops' own calendars that tenants.yaml names but never holds. JSON,
// because a password may hold any character. No value appears in an
// error.
func ParseShopCalendarSecrets(raw string) (map[string]string, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, errors.New(`SHOP_CALENDAR_SECRETS must be a JSON object of secret names and passwords, e.g. {"werkstatt-dav": "…"}`)
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if !shopcal.ValidSecretName(name) {
			return nil, errors.New("SHOP_CALENDAR_SECRETS: a secret's name must be lower-case letters, digits, '-' and '_', as tenants.yaml names it")
		}
		if m[name] == "" {
			return nil, errors.New("SHOP_CALENDAR_SECRETS: secret " + name + " is empty")
		}
	}
	return m, nil
}

package shopcal

import "regexp"

// secretName is the form of a secret's name: what tenants.yaml's
// resources[].calendar.secret gives and SHOP_CALENDAR_SECRETS lists.
var secretName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidSecretName reports whether name can name a calendar's secret
// (lower-case letters, digits, '-' and '_'): the one rule the tenants file
// and the workers' configuration share.
func ValidSecretName(name string) bool { return secretName.MatchString(name) }

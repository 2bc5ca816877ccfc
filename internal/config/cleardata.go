package config

import "strings"

// ClearDataWarning is what a process reachable from other hosts logs at
// start when no payload keys are configured: Temporal payloads and the
// personal data bookonce keeps in PostgreSQL (stored API responses, the
// inbox's message texts, the outbox's numbers and texts) are then stored
// in clear. It warns rather than refuses: there is no published
// development key to refuse, and a deployment that encrypts its disks and
// backups may decide so. "" when keys are configured or the process is
// only reachable from this machine (make run).
func (c Config) ClearDataWarning() string {
	exposed := c.Exposed()
	if c.PayloadCodec != nil || len(exposed) == 0 {
		return ""
	}
	return "PERSONAL DATA STORED IN CLEAR while reachable from other hosts (" + strings.Join(exposed, ", ") + "): " +
		"set BOOKONCE_PAYLOAD_KEYS or BOOKONCE_PAYLOAD_KEYS_FILE to encrypt Temporal payloads and the phone numbers and " +
		"texts in PostgreSQL (docs/privacy.md)"
}

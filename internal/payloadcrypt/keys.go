package payloadcrypt

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"go.temporal.io/sdk/client"
)

// Environment variables that configure the keys.
const (
	// EnvKeys lists the keys inline: "id1:base64key,id2:base64key", the
	// first one current.
	EnvKeys = "BOOKONCE_PAYLOAD_KEYS"
	// EnvKeysFile names a file in EnvKeys's format (commas or newlines
	// between keys, lines starting with # ignored), for secret mounts.
	EnvKeysFile = "BOOKONCE_PAYLOAD_KEYS_FILE"
)

// ParseKeys parses "id:base64key" entries separated by commas or
// newlines; the first is the current key. Blank entries and lines
// starting with # are skipped. Errors never quote a secret.
func ParseKeys(s string) ([]Key, error) {
	var keys []Key
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, entry := range strings.Split(line, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			id, b64, ok := strings.Cut(entry, ":")
			id = strings.TrimSpace(id)
			if !ok || id == "" {
				return nil, fmt.Errorf("%s: an entry is not id:base64key", EnvKeys)
			}
			secret, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
			if err != nil {
				return nil, fmt.Errorf("%s: key %q is not standard base64 (make one with: openssl rand -base64 32)", EnvKeys, id)
			}
			if len(secret) != KeySize {
				return nil, fmt.Errorf("%s: key %q is %d bytes, AES-256 needs %d (make one with: openssl rand -base64 32)", EnvKeys, id, len(secret), KeySize)
			}
			keys = append(keys, Key{ID: id, Secret: secret})
		}
	}
	if _, err := New(keys); len(keys) > 0 && err != nil {
		return nil, fmt.Errorf("%s: %w", EnvKeys, err) // duplicate IDs
	}
	return keys, nil
}

// Load builds the codec of the keys in EnvKeys or in the file EnvKeysFile
// names (not both); none configured: nil, encryption off.
func Load(lookup func(string) (string, bool)) (*Codec, error) {
	keys, err := loadKeys(lookup)
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	return New(keys)
}

func loadKeys(lookup func(string) (string, bool)) ([]Key, error) {
	inline, _ := lookup(EnvKeys)
	file, _ := lookup(EnvKeysFile)
	inline, file = strings.TrimSpace(inline), strings.TrimSpace(file)
	switch {
	case inline != "" && file != "":
		return nil, fmt.Errorf("set %s or %s, not both", EnvKeys, EnvKeysFile)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvKeysFile, err)
		}
		keys, err := ParseKeys(string(b))
		if err == nil && len(keys) == 0 {
			err = fmt.Errorf("%s: %s holds no key", EnvKeysFile, file)
		}
		return keys, err
	default:
		return ParseKeys(inline)
	}
}

// Apply makes a client (and the workers built on it) encrypt payloads
// and failure texts with c.
func (c *Codec) Apply(o *client.Options) {
	o.DataConverter = DataConverter(c)
	o.FailureConverter = FailureConverter(o.DataConverter)
}

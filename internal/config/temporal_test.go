package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestTemporalConnectionFromTheSDKVariables: the SDK's variables become
// the client options every process dials with; a TEMPORAL_PROFILE of the
// SDK's TOML file gives address and namespace unless the variables do;
// a broken TLS setting is a configuration error that names the files'
// variables and never the API key.
func TestTemporalConnectionFromTheSDKVariables(t *testing.T) {
	ca := testsupport.NewCA(t, "ca")
	caPath, _ := ca.Write(t, "ca")
	cert, key := ca.Client(t, "worker").Write(t, "client")
	toml := filepath.Join(t.TempDir(), "temporal.toml")
	require.NoError(t, os.WriteFile(toml, []byte("[profile.prod]\naddress = \"prod.tmprl.example:7233\"\nnamespace = \"shop.a1b2c\"\n"), 0o600))
	const apiKey = "secret-api-key-123"
	cases := []struct {
		name               string
		vars               map[string]string
		address, namespace string
		tls, creds, embeds bool
	}{
		{"nothing: the embedded server", nil, config.DefaultTemporalAddress, "default", false, false, true},
		{"mTLS", map[string]string{"TEMPORAL_ADDRESS": "t.example:7233", "TEMPORAL_TLS_CLIENT_CERT_PATH": cert, "TEMPORAL_TLS_CLIENT_KEY_PATH": key,
			"TEMPORAL_TLS_SERVER_CA_CERT_PATH": caPath, "TEMPORAL_TLS_SERVER_NAME": "t.example"}, "t.example:7233", "default", true, false, false},
		{"API key turns TLS on", map[string]string{"TEMPORAL_ADDRESS": "t.example:7233", "TEMPORAL_NAMESPACE": "ns", "TEMPORAL_API_KEY": apiKey}, "t.example:7233", "ns", true, true, false},
		{"profile", map[string]string{"TEMPORAL_PROFILE": "prod", "TEMPORAL_CONFIG_FILE": toml, "TEMPORAL_ALLOW_PLAINTEXT": "1"}, "prod.tmprl.example:7233", "shop.a1b2c", false, false, false},
		{"variables over the profile", map[string]string{"TEMPORAL_PROFILE": "prod", "TEMPORAL_CONFIG_FILE": toml, "TEMPORAL_ADDRESS": "other:7233", "TEMPORAL_ALLOW_PLAINTEXT": "1"}, "other:7233", "shop.a1b2c", false, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Load(func(k string) (string, bool) { v, ok := c.vars[k]; return v, ok })
			require.NoError(t, err)
			o := cfg.TemporalOptions()
			require.Equal(t, c.address, o.HostPort)
			require.Equal(t, c.namespace, o.Namespace)
			require.Equal(t, c.tls, o.ConnectionOptions.TLS != nil, "TLS")
			require.Equal(t, c.creds, o.Credentials != nil, "credentials")
			require.Equal(t, !c.embeds, cfg.TemporalAddressSet, "an address set means no embedded server")
			if c.vars["TEMPORAL_TLS_CLIENT_CERT_PATH"] != "" {
				require.Len(t, o.ConnectionOptions.TLS.Certificates, 1)
				require.NotNil(t, o.ConnectionOptions.TLS.RootCAs)
				require.Equal(t, "t.example", o.ConnectionOptions.TLS.ServerName)
			}
		})
	}

	_, err := config.Load(func(k string) (string, bool) {
		v, ok := map[string]string{"TEMPORAL_API_KEY": apiKey, "TEMPORAL_TLS_CLIENT_CERT_PATH": "/nonexistent/cert.pem", "TEMPORAL_TLS_CLIENT_KEY_PATH": key}[k]
		return v, ok
	})
	require.ErrorContains(t, err, "TEMPORAL_TLS_CLIENT_CERT_PATH")
	require.NotContains(t, err.Error(), apiKey)
	_, err = config.Load(func(k string) (string, bool) {
		v, ok := map[string]string{"TEMPORAL_PROFILE": "missing", "TEMPORAL_CONFIG_FILE": toml}[k]
		return v, ok
	})
	require.ErrorContains(t, err, "TEMPORAL_PROFILE")
}

// TestPlaintextTemporalOffThisMachineIsRefused: a frontend elsewhere is
// dialled with TLS (mTLS or an API key), or plaintext only when
// TEMPORAL_ALLOW_PLAINTEXT=1 says so in writing; this machine's own
// server (make run, the drill) needs neither.
func TestPlaintextTemporalOffThisMachineIsRefused(t *testing.T) {
	cases := []struct {
		name   string
		vars   map[string]string
		refuse string
	}{
		{"cluster without TLS", map[string]string{"TEMPORAL_ADDRESS": "temporal-frontend.temporal.svc:7233"}, "TEMPORAL_ALLOW_PLAINTEXT=1"},
		{"profile without TLS", map[string]string{"TEMPORAL_ADDRESS": "10.0.0.7:7233", "TEMPORAL_NAMESPACE": "shop"}, "has no TLS"},
		{"a typo is not a yes", map[string]string{"TEMPORAL_ADDRESS": "temporal:7233", "TEMPORAL_ALLOW_PLAINTEXT": "true"}, "must be 1 or unset"},
		{"allowed in writing", map[string]string{"TEMPORAL_ADDRESS": "temporal:7233", "TEMPORAL_ALLOW_PLAINTEXT": "1"}, ""},
		{"an API key turns TLS on", map[string]string{"TEMPORAL_ADDRESS": "ns.tmprl.example:7233", "TEMPORAL_API_KEY": "k-123"}, ""},
		{"loopback", map[string]string{"TEMPORAL_ADDRESS": "127.0.0.1:7233"}, ""},
		{"localhost", map[string]string{"TEMPORAL_ADDRESS": "localhost:7233"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Load(func(k string) (string, bool) { v, ok := c.vars[k]; return v, ok })
			if c.refuse == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.refuse)
		})
	}
}

// TestTemporalCompressionOnlyOffLoopback: calls to a server on this
// machine go uncompressed, calls to a cluster elsewhere gzip-compressed
// (the SDK's default).
func TestTemporalCompressionOnlyOffLoopback(t *testing.T) {
	for _, c := range []struct {
		hostPort string
		none     bool
	}{
		{"127.0.0.1:7233", true},
		{"127.0.0.2:7233", true},
		{"localhost:7233", true},
		{"[::1]:7233", true},
		{"temporal:7233", false},
		{"10.0.0.5:7233", false},
		{"shop.a1b2c.tmprl.cloud:7233", false},
		{"not a host port", false},
	} {
		got := config.TemporalCompression(c.hostPort)
		if c.none {
			require.IsType(t, &client.GrpcCompressionNone{}, got, c.hostPort)
		} else {
			require.IsType(t, &client.GrpcCompressionGzip{}, got, c.hostPort)
		}
	}
}

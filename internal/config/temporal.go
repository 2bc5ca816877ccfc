package config

import (
	"fmt"
	"net"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
)

// The Temporal SDK's own variables for the connection (the names every
// Temporal SDK and the temporal CLI read), beside TEMPORAL_ADDRESS and
// TEMPORAL_NAMESPACE.
const (
	TemporalAPIKeyVar     = "TEMPORAL_API_KEY"
	TemporalClientCertVar = "TEMPORAL_TLS_CLIENT_CERT_PATH"
	TemporalClientKeyVar  = "TEMPORAL_TLS_CLIENT_KEY_PATH"
	TemporalServerCAVar   = "TEMPORAL_TLS_SERVER_CA_CERT_PATH"
	TemporalServerNameVar = "TEMPORAL_TLS_SERVER_NAME"
	TemporalProfileVar    = "TEMPORAL_PROFILE"
	TemporalConfigFileVar = "TEMPORAL_CONFIG_FILE"
)

// TemporalAllowPlaintextVar, set to 1, lets a process dial a Temporal
// frontend off this machine without TLS: workflow histories carry the
// booking's (encrypted) payloads, but the task queue, the frontend's
// answers and any API key would cross the network readable and
// forgeable, so plaintext is a choice a lab (docker compose's private
// network) makes in writing, never a default.
const TemporalAllowPlaintextVar = "TEMPORAL_ALLOW_PLAINTEXT"

// TemporalDBSyncVar says how the embedded server syncs its SQLite file:
// "normal" (every commit survives a crash of the process, the last ones
// can be lost with the machine's power) or "full" (an fsync per commit).
const TemporalDBSyncVar = "TEMPORAL_DB_SYNC"

// temporalDBSync reads TemporalDBSyncVar.
func (r *reader) temporalDBSync(c *Config) {
	switch v := strings.ToLower(r.get(TemporalDBSyncVar, "normal")); v {
	case "normal", "full":
		c.TemporalDBSync = v
	default:
		r.fail(fmt.Sprintf("%s must be \"normal\" or \"full\", got %q", TemporalDBSyncVar, v))
	}
}

// noEnv lets envconfig read no variable itself: Load reads the documented
// ones and hands them over, so the table in docs/configuration.md is the whole truth.
type noEnv struct{}

func (noEnv) Environ() []string               { return nil }
func (noEnv) LookupEnv(string) (string, bool) { return "", false }

// temporal reads the connection to Temporal: a profile of the SDK's TOML
// file when TEMPORAL_PROFILE names one (never the file on its own, so a
// developer's temporal CLI profile does not redirect make run), then the
// variables over it, turned into client options by the SDK's envconfig
// (TLS with a client certificate, a server CA and name; an API key as
// credentials, which turns TLS on).
func (r *reader) temporal(c *Config) {
	r.temporalDBSync(c)
	var prof envconfig.ClientConfigProfile
	if name := r.get(TemporalProfileVar, ""); name != "" {
		var err error
		prof, err = envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{
			ConfigFilePath: r.get(TemporalConfigFileVar, ""), ConfigFileProfile: name, DisableEnv: true, EnvLookup: noEnv{},
		})
		if err != nil {
			r.fail(fmt.Sprintf("%s=%s: %v", TemporalProfileVar, name, err))
			return
		}
	} else {
		r.get(TemporalConfigFileVar, "") // only read with a profile
	}
	if _, set := r.lookup("TEMPORAL_ADDRESS"); !set && prof.Address != "" {
		c.TemporalAddress, c.TemporalAddressSet = prof.Address, true
	}
	if _, set := r.lookup("TEMPORAL_NAMESPACE"); !set && prof.Namespace != "" {
		c.TemporalNamespace = prof.Namespace
	}
	prof.Address, prof.Namespace = c.TemporalAddress, c.TemporalNamespace
	if key := r.get(TemporalAPIKeyVar, ""); key != "" {
		prof.APIKey = key
	}
	r.temporalTLS(&prof)
	opts, err := prof.ToClientOptions(envconfig.ToClientOptionsRequest{})
	if err != nil { // names files, never the key
		r.fail(fmt.Sprintf("Temporal TLS (%s, %s, %s): %v", TemporalClientCertVar, TemporalClientKeyVar, TemporalServerCAVar, err))
		return
	}
	c.TemporalClient = opts
	r.refusePlaintext(c)
}

// refusePlaintext fails a configuration that would dial a frontend off
// this machine without TLS, unless TemporalAllowPlaintextVar says so.
func (r *reader) refusePlaintext(c *Config) {
	allow := r.get(TemporalAllowPlaintextVar, "")
	if allow != "" && allow != "1" {
		r.fail(fmt.Sprintf("%s must be 1 or unset, got %q", TemporalAllowPlaintextVar, allow))
		return
	}
	host, _, err := net.SplitHostPort(c.TemporalAddress)
	if err != nil || loopbackHost(host) || c.TemporalClient.ConnectionOptions.TLS != nil || allow == "1" {
		return
	}
	r.fail(fmt.Sprintf("TEMPORAL_ADDRESS=%s is off this machine and has no TLS: set %s (and %s, %s, %s) or %s, or %s=1 on a private lab network",
		c.TemporalAddress, TemporalServerCAVar, TemporalClientCertVar, TemporalClientKeyVar, TemporalServerNameVar, TemporalAPIKeyVar, TemporalAllowPlaintextVar))
}

// temporalTLS lays the TLS variables over the profile's TLS settings.
func (r *reader) temporalTLS(prof *envconfig.ClientConfigProfile) {
	set := func(name string, field *string) {
		if v := r.get(name, ""); v != "" {
			if prof.TLS == nil {
				prof.TLS = &envconfig.ClientConfigTLS{}
			}
			*field = v
		}
	}
	var cert, key, ca, server string
	set(TemporalClientCertVar, &cert)
	set(TemporalClientKeyVar, &key)
	set(TemporalServerCAVar, &ca)
	set(TemporalServerNameVar, &server)
	if prof.TLS == nil {
		return
	}
	for _, f := range []struct {
		v  string
		to *string
	}{
		{cert, &prof.TLS.ClientCertPath}, {key, &prof.TLS.ClientKeyPath}, {ca, &prof.TLS.ServerCACertPath}, {server, &prof.TLS.ServerName},
	} {
		if f.v != "" {
			*f.to = f.v
		}
	}
}

// TemporalOptions are the client options every bookonce process dials
// Temporal with: address, namespace, TLS and credentials as configured;
// the caller adds its logger and metrics.
func (c Config) TemporalOptions() client.Options {
	o := c.TemporalClient
	o.HostPort, o.Namespace = c.TemporalAddress, c.TemporalNamespace
	o.ConnectionOptions.GrpcCompression = TemporalCompression(o.HostPort)
	return o
}

// TemporalCompression is how a client compresses its calls to the
// Temporal frontend at hostPort: gzip (the SDK's default) to a cluster
// elsewhere, where it saves bandwidth; none on loopback (make run's
// embedded server), where compressing every task, request and response
// saves no byte on a wire and took 7 % of the latency bench's CPU.
func TemporalCompression(hostPort string) client.GrpcCompression {
	if host, _, err := net.SplitHostPort(hostPort); err == nil && loopbackHost(host) {
		return &client.GrpcCompressionNone{}
	}
	return &client.GrpcCompressionGzip{}
}

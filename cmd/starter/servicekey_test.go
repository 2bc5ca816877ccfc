package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/servicetoken"
)

// TestServiceKeyMakesAPairTheProcessesAccept: the two lines `starter
// service-key` prints are what a worker and the APIs are given; with them
// a reachable worker and API start (no development key), and a token the
// worker mints is accepted by the API. Two runs make two different keys.
func TestServiceKeyMakesAPairTheProcessesAccept(t *testing.T) {
	env := func() map[string]string {
		var stdout, stderr bytes.Buffer
		require.Equal(t, exitOK, run([]string{"service-key"}, &stdout, &stderr), stderr.String())
		out := map[string]string{"CALENDAR_LISTEN": "0.0.0.0:8081"} // reachable: development keys are refused
		for line := range strings.SplitSeq(stdout.String(), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
				out[k] = v
			}
		}
		return out
	}
	first, second := env(), env()
	require.NotEqual(t, first[string(config.SecretServiceKey)], second[string(config.SecretServiceKey)])

	cfg, err := config.Load(func(k string) (string, bool) { v, ok := first[k]; return v, ok })
	require.NoError(t, err)
	require.NoError(t, cfg.CheckSecrets(config.SecretServiceKey, config.SecretServicePublicKeys))
	tok, err := cfg.ServiceMinter().Mint("demo", servicetoken.Calendar)
	require.NoError(t, err)
	tenant, ok := cfg.ServiceVerifier(servicetoken.Calendar, func(string) bool { return true }).Lookup(tok)
	require.True(t, ok)
	require.Equal(t, "demo", tenant)
}

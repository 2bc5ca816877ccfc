package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
)

// TestCheckArgs: help on stdout with status 0, anything else is a usage
// error on stderr with status 2; no arguments run the stack.
func TestCheckArgs(t *testing.T) {
	cases := []struct {
		name       string
		args       []string
		code       int
		stdout     string
		stderrPart string
	}{
		{"no arguments run the stack", nil, -1, "", ""},
		{"-h", []string{"-h"}, 0, usage, ""},
		{"--help", []string{"--help"}, 0, usage, ""},
		{"an argument", []string{"serve"}, 2, "", `dev: unexpected argument "serve"`},
		{"an unknown flag", []string{"--port", "1"}, 2, "", `unexpected argument "--port"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, tc.code, checkArgs(tc.args, &stdout, &stderr))
			require.Equal(t, tc.stdout, stdout.String())
			if tc.stderrPart == "" {
				require.Empty(t, stderr.String())
			} else {
				require.Contains(t, stderr.String(), tc.stderrPart)
				require.Contains(t, stderr.String(), "usage: dev")
			}
		})
	}
}

// TestWireWebhooks: make run's payment API delivers to the gateway's
// /webhooks/stripe with a fresh whsec_ secret per run; a configured URL
// or secret is kept.
func TestWireWebhooks(t *testing.T) {
	base := config.Config{GatewayListen: "0.0.0.0:8080"}
	a, err := wireWebhooks(base)
	require.NoError(t, err)
	b, err := wireWebhooks(base)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8080/webhooks/stripe", a.StripeWebhookURL)
	require.True(t, strings.HasPrefix(a.StripeWebhookSecret, "whsec_"))
	require.NotEqual(t, a.StripeWebhookSecret, b.StripeWebhookSecret, "generated per run")

	set := config.Config{GatewayListen: "127.0.0.1:8080", StripeWebhookURL: "http://gw:1/webhooks/stripe", StripeWebhookSecret: "whsec_mine"}
	c, err := wireWebhooks(set)
	require.NoError(t, err)
	require.Equal(t, set.StripeWebhookURL, c.StripeWebhookURL)
	require.Equal(t, "whsec_mine", c.StripeWebhookSecret)
	require.Contains(t, depositNote(c), "payment links")
	require.NotContains(t, depositNote(c), "whsec_mine", "the secret is never printed")
}

package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
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

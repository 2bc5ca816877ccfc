package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/drill"
)

// TestUsage: the command lines that never start the drill. Help goes to
// stdout with status 0; a bad command line says why on stderr, status 2.
func TestUsage(t *testing.T) {
	cases := []struct {
		name       string
		args       []string
		code       int
		stderrPart string // "" means: help on stdout, nothing on stderr
	}{
		{"-h", []string{"-h"}, 0, ""},
		{"--help", []string{"--help"}, 0, ""},
		{"an unknown flag", []string{"-bogus"}, 2, "flag provided but not defined: -bogus"},
		{"a bad value", []string{"-n", "many"}, 2, `invalid value "many" for flag -n`},
		{"no bookings", []string{"-n", "0"}, 2, "must be positive"},
		{"an argument", []string{"now"}, 2, "there are no arguments"},
		{"an unknown outage target", []string{"-outage-of", "twilio"}, 2, "-outage-of is payments or calendar"},
		{"a bad fault rule", []string{"-fault", "stripe: POST /v1/x drop"}, 2, "calendar|payments|twilio"},
		{"an unknown change mode", []string{"-changes", "email"}, 2, `-changes must be "api", "chat" or "off"`},
		{"changes above 100 percent", []string{"-cancel-share", "60", "-reschedule-share", "50"}, 2, "add up to at most 100"},
		{"an unknown topology", []string{"-topology", "cluster"}, 2, `-topology must be "single" or "scaled"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, tc.code, run(tc.args, &stdout, &stderr))
			if tc.stderrPart == "" {
				require.Contains(t, stdout.String(), "usage: chaos")
				require.Contains(t, stdout.String(), "-kill-every")
				require.Empty(t, stderr.String())
				return
			}
			require.Empty(t, stdout.String())
			require.Contains(t, stderr.String(), tc.stderrPart)
			require.Contains(t, stderr.String(), "usage: chaos")
		})
	}
}

// TestAgentFaultRule: -fault takes the agent tools as an upstream, and
// replaces only their defaults.
func TestAgentFaultRule(t *testing.T) {
	var stdout, stderr bytes.Buffer
	opts, _, code := parseArgs([]string{"-fault", "agent: POST /v1/agent/tools/ reset p=0.5"}, &stdout, &stderr)
	require.Equal(t, -1, code, stderr.String())
	require.Len(t, opts.Agent, 1)
	require.EqualValues(t, "reset", opts.Agent[0].Fault)
	require.Nil(t, opts.Calendar, "the calendar keeps its defaults")
}

// TestChangeFlags: -changes picks how customers change bookings, and a
// share of 0 means none (not the options' default).
func TestChangeFlags(t *testing.T) {
	cases := []struct {
		args          []string
		mode          drill.ChangeMode
		cancel, moves int
	}{
		{nil, drill.ChangesChat, drill.DefaultChangeShare, drill.DefaultChangeShare},
		{[]string{"-changes", "chat", "-reschedule-share", "0"}, drill.ChangesChat, drill.DefaultChangeShare, -1},
		{[]string{"-changes", "off", "-cancel-share", "20"}, drill.ChangesOff, 20, drill.DefaultChangeShare},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		opts, _, code := parseArgs(tc.args, &stdout, &stderr)
		require.Equal(t, -1, code, stderr.String())
		require.Equal(t, tc.mode, opts.Changes, "%v", tc.args)
		require.Equal(t, tc.cancel, opts.CancelShare, "%v", tc.args)
		require.Equal(t, tc.moves, opts.RescheduleShare, "%v", tc.args)
	}
}

// TestTopologyFlag: -topology picks the processes; the scaled topology
// brings its three workers unless -workers says otherwise.
func TestTopologyFlag(t *testing.T) {
	cases := []struct {
		args     []string
		topology drill.Topology
		workers  int // 0: the topology's
	}{
		{nil, drill.TopologySingle, 2},
		{[]string{"-topology", "scaled"}, drill.TopologyScaled, 0},
		{[]string{"-topology", "scaled", "-workers", "4"}, drill.TopologyScaled, 4},
		{[]string{"-topology", "single", "-workers", "1"}, drill.TopologySingle, 1},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		opts, _, code := parseArgs(tc.args, &stdout, &stderr)
		require.Equal(t, -1, code, stderr.String())
		require.Equal(t, tc.topology, opts.Topology, "%v", tc.args)
		require.Equal(t, tc.workers, opts.Workers, "%v", tc.args)
	}
}

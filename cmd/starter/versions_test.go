package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/stack"
)

// TestPrintVersions: the builds with their status, the open workflows per
// build (unversioned ones named so) and the change IDs they recorded.
func TestPrintVersions(t *testing.T) {
	at := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		v    stack.Versions
		want string
	}{
		{"no versioned worker yet", stack.Versions{Deployment: "bookonce", Changes: map[string]int{}},
			"deployment bookonce\n\nBUILD  STATUS  CREATED\n" +
				"(none: no versioned worker has polled; set WORKER_BUILD_ID)\n\n" +
				"OPEN ON BUILD  WORKFLOW TYPE  BEHAVIOR  COUNT\n\nCHANGE ID-VERSION  OPEN WORKFLOWS\n" +
				"(none: no open workflow recorded a change the code knows)\n"},
		{"a deploy under way", stack.Versions{
			Deployment: "bookonce",
			Builds:     []stack.Build{{BuildID: "b2", Status: "current", Created: at}, {BuildID: "b1", Status: "draining", Created: at.Add(-time.Hour)}},
			Open: []stack.OpenCount{{BuildID: "", Type: "ConversationWorkflow", Count: 3},
				{BuildID: "b1", Type: "AppointmentWorkflow", Behavior: "Pinned", Count: 2}},
			Changes: map[string]int{"shop-calendar-1": 4, "booking-reschedule-1": 5},
		}, "deployment bookonce\n\nBUILD  STATUS    CREATED\nb2     current   2026-12-07T06:00:00Z\nb1     draining  2026-12-07T05:00:00Z\n\n" +
			"OPEN ON BUILD  WORKFLOW TYPE         BEHAVIOR  COUNT\n(unversioned)  ConversationWorkflow  -         3\nb1             AppointmentWorkflow   Pinned    2\n\n" +
			"CHANGE ID-VERSION     OPEN WORKFLOWS\nbooking-reschedule-1  5\nshop-calendar-1       4\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, printVersions(&out, tc.v))
			require.Equal(t, tc.want, out.String())
		})
	}
}

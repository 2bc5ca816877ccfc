package stack_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	sdklog "go.temporal.io/sdk/log"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
)

const (
	phone  = "+4915112345678"
	masked = "+49·········78" // mask.Phones, as the ops page shows it
)

type customer struct{ Name, Phone string }

// TestLogsMaskPhoneNumbers: whatever path a number takes into a log line
// (message, attribute, group, logger attributes, error, struct, the Temporal
// SDK's WorkflowID field), the JSON line holds only the masked form.
func TestLogsMaskPhoneNumbers(t *testing.T) {
	cases := []struct {
		name string
		log  func(l *slog.Logger)
		// path of the field in the JSON line, and its expected value
		path []string
		want string
	}{
		{"message", func(l *slog.Logger) { l.Info("call from " + phone) }, []string{"msg"}, "call from " + masked},
		{"attribute", func(l *slog.Logger) { l.Info("x", "customer", phone) }, []string{"customer"}, masked},
		{"whatsapp address", func(l *slog.Logger) { l.Info("x", "to", "whatsapp:"+phone) }, []string{"to"}, "whatsapp:" + masked},
		{"workflow ID", func(l *slog.Logger) { l.Info("x", "workflow", "customer:demo:"+phone) }, []string{"workflow"}, "customer:demo:" + masked},
		{"nested groups", func(l *slog.Logger) {
			l.Info("x", slog.Group("a", slog.Group("b", "to", phone)))
		}, []string{"a", "b", "to"}, masked},
		{"logger attributes and group", func(l *slog.Logger) {
			l.With("customer", phone).WithGroup("g").Info("x", "to", phone)
		}, []string{"customer"}, masked},
		{"attribute inside WithGroup", func(l *slog.Logger) {
			l.WithGroup("g").With("to", phone).Info("x")
		}, []string{"g", "to"}, masked},
		{"error", func(l *slog.Logger) {
			l.Error("x", "err", fmt.Errorf("send to %s: %w", phone, errors.New("timeout")))
		}, []string{"err"}, "send to " + masked + ": timeout"},
		{"struct", func(l *slog.Logger) { l.Info("x", "c", customer{"Anna", phone}) }, []string{"c"}, "{Name:Anna Phone:" + masked + "}"},
		{"Temporal SDK field", func(l *slog.Logger) {
			sdklog.With(sdklog.NewStructuredLogger(l), "WorkflowID", "customer:demo:"+phone).Info("Workflow task started", "Attempt", 1)
		}, []string{"WorkflowID"}, "customer:demo:" + masked},
		{"URL-escaped in a request URL", func(l *slog.Logger) {
			l.Info("x", "url", "/v1/bookings?customer=%2B"+phone[1:])
		}, []string{"url"}, "/v1/bookings?customer=" + masked},
		{"no number: untouched", func(l *slog.Logger) {
			l.Info("x", "start", "2026-12-01T14:00:00+01:00", "key", "bko1_0123456789")
		}, []string{"start"}, "2026-12-01T14:00:00+01:00"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testsupport.Config(t)
			cfg.LogFormat = "json"
			var buf bytes.Buffer
			tc.log(stack.Logger(cfg, &buf))
			line := buf.String()
			require.NotContains(t, line, phone[3:], "no unmasked number in %s", line)
			var v any
			require.NoError(t, json.Unmarshal([]byte(line), &v))
			for _, k := range tc.path {
				m, ok := v.(map[string]any)
				require.True(t, ok, "%s in %s", k, line)
				v = m[k]
			}
			require.Equal(t, tc.want, v)
		})
	}
}

// TestTextLogsMaskPhoneNumbers: the text format (the default) masks too.
func TestTextLogsMaskPhoneNumbers(t *testing.T) {
	cfg := testsupport.Config(t)
	cfg.LogFormat = "text"
	var buf bytes.Buffer
	stack.Logger(cfg, &buf).Warn("conversation "+phone, "workflow", "customer:demo:"+phone)
	require.NotContains(t, buf.String(), phone[3:])
	require.Equal(t, 2, strings.Count(buf.String(), masked), buf.String())
}

package chaos_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/chaos"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in      string
		want    chaos.Rule
		wantErr string
	}{
		{in: "POST /v1/holds drop-after-commit p=0.2 limit=5",
			want: chaos.Rule{Method: "POST", PathPrefix: "/v1/holds", Fault: chaos.DropAfterCommit, Probability: 0.2, Limit: 5}},
		{in: "any /v1/ delay=200ms p=0.5",
			want: chaos.Rule{PathPrefix: "/v1/", Fault: chaos.Delay, Delay: 200 * time.Millisecond, Probability: 0.5}},
		{in: "POST /v1/payment_intents error-after-commit status=503 p=0.1",
			want: chaos.Rule{Method: "POST", PathPrefix: "/v1/payment_intents", Fault: chaos.ErrorAfterCommit, Status: 503, Probability: 0.1}},
		{in: "post * error-after-commit",
			want: chaos.Rule{Method: "POST", Fault: chaos.ErrorAfterCommit, Status: 502, Probability: 1}},
		{in: "* any reset", want: chaos.Rule{Fault: chaos.Reset, Probability: 1}},
		{in: "  GET   /x   duplicate  p=0 ", want: chaos.Rule{Method: "GET", PathPrefix: "/x", Fault: chaos.Duplicate}},
		{in: "GET /x delay delay=1s", want: chaos.Rule{Method: "GET", PathPrefix: "/x", Fault: chaos.Delay, Delay: time.Second, Probability: 1}},

		{in: "", wantErr: `want "METHOD PATH FAULT`},
		{in: "POST /v1/holds", wantErr: `want "METHOD PATH FAULT`},
		{in: "POST /v1/holds dorp-after-commit", wantErr: `unknown fault "dorp-after-commit"`},
		{in: "PO$T /v1/holds reset", wantErr: `bad method "PO$T"`},
		{in: "POST v1/holds reset", wantErr: `path "v1/holds" does not start with /`},
		{in: "POST /v1/holds reset p=1.5", wantErr: "probability 1.5 outside 0..1"},
		{in: "POST /v1/holds reset p=half", wantErr: "bad p=half"},
		{in: "POST /v1/holds reset limit=x", wantErr: "bad limit=x"},
		{in: "POST /v1/holds reset limit=-2", wantErr: "limit -2 is negative"},
		{in: "any /v1/ delay=soon", wantErr: "bad delay=soon"},
		{in: "any /v1/ error-after-commit status=404", wantErr: "status 404 is not a 5xx"},
		{in: "any /v1/ reset status=503", wantErr: "status= only applies to error-after-commit"},
		{in: "any /v1/ reset duplicate", wantErr: `two faults "reset" and "duplicate"`},
		{in: "any /v1/ reset delay=1s", wantErr: `two faults "reset" and "delay"`},
		{in: "any /v1/ p=0.5", wantErr: "no fault"},
		{in: "any /v1/ reset prob=0.5", wantErr: `unknown key "prob"`},
		{in: "any /v1/ delay", wantErr: "delay fault without a delay"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := chaos.ParseRule(tt.in)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.ErrorContains(t, err, "chaos: rule", "the message quotes the rule")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

package workflows_test

import (
	"crypto/rand"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestReplayRecordedHistoriesWithPayloadEncryption: a worker that
// encrypts payloads (BOOKONCE_PAYLOAD_KEYS switched on) still replays the
// histories recorded in clear, because the codec passes clear payloads
// and failures through.
func TestReplayRecordedHistoriesWithPayloadEncryption(t *testing.T) {
	k := payloadcrypt.Key{ID: "replay", Secret: make([]byte, payloadcrypt.KeySize)}
	_, err := rand.Read(k.Secret)
	require.NoError(t, err)
	codec, err := payloadcrypt.New([]payloadcrypt.Key{k})
	require.NoError(t, err)
	dc := payloadcrypt.DataConverter(codec)
	files, err := filepath.Glob(filepath.Join(historiesDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{DataConverter: dc, FailureConverter: payloadcrypt.FailureConverter(dc)})
			require.NoError(t, err)
			appointment.Register(r)
			deposit.Register(r)
			conversation.Register(r)
			lifecycle.Register(r)
			h, exec := loadHistory(t, file)
			require.NoError(t, replayHistory(t, r, h, exec), "an encrypting worker does not replay %s", file)
		})
	}
}

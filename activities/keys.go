// Package activities holds every side effect of the bookonce sagas. Each
// activity derives its idempotency key from its own execution (see Key) and
// sends it, with the booking's business reference, to the downstream API, so
// a retried or re-executed activity has its first effect and no other.
package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"go.temporal.io/sdk/activity"

	"github.com/bookonce/bookonce/internal/tracing"
)

// KeyPrefix marks keys derived by Key (and their derivation version).
const KeyPrefix = "bko1_"

// Key derives the downstream Idempotency-Key of one activity execution from
// namespace, workflow ID, run ID and activity ID (Temporal's recipe): the
// same on every retry attempt of that activity, different for any other
// activity or workflow run. Hashing gives a fixed, printable length
// whatever the IDs contain. It never uses randomness or the clock.
func Key(namespace, workflowID, runID, activityID string) string {
	h := sha256.New()
	for _, part := range []string{namespace, workflowID, runID, activityID} {
		h.Write([]byte(part))
		h.Write([]byte{0}) // separator: ("ab","c") and ("a","bc") differ
	}
	return KeyPrefix + hex.EncodeToString(h.Sum(nil))[:48]
}

// KeyOf is Key for the activity running in ctx; it tags the activity's
// span with it (the operation key), so a trace names the operation the
// downstream APIs record under this key.
func KeyOf(ctx context.Context) string {
	info := activity.GetInfo(ctx)
	key := Key(info.Namespace, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, info.ActivityID)
	tracing.Tag(ctx, tracing.OperationKey.String(key))
	return key
}

// SubKey derives a key for one of several calls an activity makes (e.g. one
// release per hold): stable across attempts, distinct per part.
func SubKey(ctx context.Context, part string) string {
	info := activity.GetInfo(ctx)
	key := Key(info.Namespace, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, info.ActivityID+"/"+part)
	tracing.Tag(ctx, tracing.OperationKey.String(key)) // the key of the call under way
	return key
}

// Step describes one executed side effect for the saga's status table.
type Step struct {
	// Key is the idempotency key sent downstream.
	Key string `json:"key"`
	// Attempt is the attempt that succeeded (1 = first try).
	Attempt int32 `json:"attempt"`
	// DownstreamID is the ID of the object the downstream returned.
	DownstreamID string `json:"downstream_id"`
}

func stepOf(ctx context.Context, key, downstreamID string) Step {
	return Step{Key: key, Attempt: activity.GetInfo(ctx).Attempt, DownstreamID: downstreamID}
}

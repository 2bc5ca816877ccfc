package intent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
)

// berlin is the demo tenant's location; the reference time is Monday,
// 30 November 2026, 10:00 there, so "Dienstag" is tomorrow (1 December).
var berlin = mustLoad("Europe/Berlin")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

var now = time.Date(2026, 11, 30, 10, 0, 0, 0, berlin)

// at is a wall-clock time in Berlin.
func at(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, berlin)
}

func extract(t testing.TB, text string) intent.Result {
	t.Helper()
	r, err := intent.Rules{}.Extract(context.Background(), text, now, berlin, intent.DemoCatalogue())
	require.NoError(t, err)
	return r
}

package drill

import (
	"os"
	"testing"
)

// TestMain lets the drill start this test binary as its worker processes.
func TestMain(m *testing.M) {
	RunWorkerIfAsked()
	os.Exit(m.Run())
}

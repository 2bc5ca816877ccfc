package testsupport

import (
	"io"
	"strings"
	"testing"
)

// LogWriter sends what is written to it (service logs) to the test log,
// which go test shows only when the test fails or with -v.
func LogWriter(t testing.TB) io.Writer { return testWriter{t} }

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

package web

import (
	"bytes"
	"net/http"
	"strconv"
)

// Recorder buffers a handler's response in memory: the idempotency layer
// holds an answer back until its outcome is committed, and the voice
// platforms' adapters wrap a tool's answer in the platform's format.
type Recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{header: http.Header{}} }

// Header implements http.ResponseWriter.
func (r *Recorder) Header() http.Header { return r.header }

// WriteHeader implements http.ResponseWriter; like net/http, only the first
// call counts.
func (r *Recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

// Write implements http.ResponseWriter.
func (r *Recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// Status is the response's status code.
func (r *Recorder) Status() int {
	if r.status == 0 {
		return http.StatusOK // net/http's answer when a handler writes nothing
	}
	return r.status
}

// Body is the response's body so far.
func (r *Recorder) Body() []byte { return r.body.Bytes() }

// Flush writes the buffered response to w.
func (r *Recorder) Flush(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(r.body.Len()))
	w.WriteHeader(r.Status())
	_, _ = w.Write(r.body.Bytes())
}

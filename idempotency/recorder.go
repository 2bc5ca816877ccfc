package idempotency

import (
	"bytes"
	"net/http"
	"strconv"
)

// recorder buffers the handler's response: nothing reaches the client
// before the outcome is decided and, if stored, committed. Otherwise a
// client could see a success whose effect is then rolled back.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

// Header implements http.ResponseWriter.
func (r *recorder) Header() http.Header { return r.header }

// WriteHeader implements http.ResponseWriter; like net/http, only the first
// call counts.
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

// Write implements http.ResponseWriter.
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) statusCode() int {
	if r.status == 0 {
		return http.StatusOK // net/http's answer when a handler writes nothing
	}
	return r.status
}

// flush writes the buffered response to w.
func (r *recorder) flush(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(r.body.Len()))
	w.WriteHeader(r.statusCode())
	_, _ = w.Write(r.body.Bytes())
}

// snapshot reads what the handler marked, under the lock because a handler
// may call Keep or SetResource from a goroutine of its own.
func (st *requestState) snapshot() (keep bool, typ, id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.keep, st.resourceType, st.resourceID
}

package payloadcrypt

import (
	"bytes"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"go.temporal.io/sdk/converter"

	"github.com/bookonce/bookonce/internal/web"
)

// CodecRoute is the codec server's base path, the Web UI's codec
// endpoint: it POSTs to CodecRoute+"/encode" and CodecRoute+"/decode".
// It lies under /ops so that the browser sends the ops session cookie
// (Path=/ops) with the Web UI's requests: an operator signed in to the
// ops page sees decoded payloads in the Web UI, everyone else ciphertext.
const CodecRoute = "/ops/codec"

// MaxCodecBody caps a codec request: the Web UI sends one event batch.
const MaxCodecBody = 8 << 20

// corsAllowHeaders are the headers the Web UI sends to a codec server.
const corsAllowHeaders = "Authorization, Content-Type, X-Namespace"

// Caller is who a codec request comes from: one tenant's staff (a
// tenant's bearer token or ops session), or an operator, whose own
// credential decodes every tenant's payloads.
type Caller struct {
	Tenant   string
	Operator bool
}

// Authorizer admits a request to the codec server and says who sent it.
type Authorizer func(r *http.Request) (Caller, bool)

// CodecServer serves Temporal's remote codec protocol (POST .../encode
// and .../decode with {"payloads":[...]}), the SDK's handler, behind
// authentication and CORS for the Web UI. A tenant's caller decodes only
// the tenant's payloads (others come back still encrypted) and encodes
// with the tenant's key; an operator decodes all and encodes with the
// master key.
type CodecServer struct {
	Codec     *Codec
	Authorize Authorizer
	// Origins may call the server from a browser (the Web UI's origins);
	// requests from any other origin get no CORS headers.
	Origins []string
	Logger  *slog.Logger
}

// Handler serves the codec routes under CodecRoute.
func (s CodecServer) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		allowed := origin != "" && slices.Contains(s.Origins, origin)
		w.Header().Add("Vary", "Origin")
		if allowed {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			// The Web UI sends the ops session cookie (includeCredentials).
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		if r.Method == http.MethodOptions { // a preflight carries no credentials
			if !allowed {
				web.WriteProblem(w, web.NewProblem(http.StatusForbidden, "origin_not_allowed",
					"origin "+origin+" may not call the codec server (CODEC_CORS_ORIGINS)"))
				return
			}
			w.Header().Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", corsAllowHeaders)
			w.Header().Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method != http.MethodPost || (r.URL.Path != CodecRoute+"/encode" && r.URL.Path != CodecRoute+"/decode") {
			web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found", "the codec server serves POST "+CodecRoute+"/encode and "+CodecRoute+"/decode"))
			return
		}
		var caller Caller
		ok := false
		if s.Authorize != nil {
			caller, ok = s.Authorize(r)
		}
		if !ok || (!caller.Operator && caller.Tenant == "") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="bookonce ops"`)
			web.WriteProblem(w, web.NewProblem(http.StatusUnauthorized, "unauthenticated",
				"send Authorization: Bearer <token>, or sign in to the ops page (/ops) in this browser"))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxCodecBody)
		var codec converter.PayloadCodec = s.Codec
		if !caller.Operator {
			codec = s.Codec.TenantView(caller.Tenant)
		}
		s.serve(converter.NewPayloadCodecHTTPHandler(codec), w, r)
	})
}

// serve runs the SDK's handler and turns its plain-text errors (a body
// that is not payloads JSON, an unknown key, a tampered payload) into
// problem+json.
func (s CodecServer) serve(codec http.Handler, w http.ResponseWriter, r *http.Request) {
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	codec.ServeHTTP(rec, r)
	if rec.status != http.StatusOK {
		detail := strings.TrimSpace(rec.body.String())
		if s.Logger != nil {
			s.Logger.Warn("codec request failed", "path", r.URL.Path, "status", rec.status, "err", detail)
		}
		web.WriteProblem(w, web.NewProblem(rec.status, "codec_failed", detail))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store") // decoded payloads are personal data
	w.WriteHeader(http.StatusOK)
	_, _ = rec.body.WriteTo(w) // the client went away: nothing left to tell it
}

// recorder buffers the SDK handler's answer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(status int)      { r.status = status }

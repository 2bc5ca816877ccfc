package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
)

// Platform names a voice-agent platform whose tool-call webhooks the
// agent listener takes in the platform's own wire format.
type Platform string

// The platforms with an adapter.
const (
	PlatformVapi       Platform = "vapi"
	PlatformRetell     Platform = "retell"
	PlatformElevenLabs Platform = "elevenlabs"
)

// RoutePlatforms is the prefix of the platforms' routes: a platform posts
// a tenant's tool calls to RoutePlatforms + "/" + its name, with the
// tenant's API token as its bearer credential.
const RoutePlatforms = "/v1/agent/platforms"

// PlatformSecrets returns the secret a tenant gave a platform to sign its
// tool calls with (VOICE_PLATFORM_SECRETS); without one, the tenant's API
// token alone authenticates the platform.
type PlatformSecrets func(tenant string, p Platform) (secret string, ok bool)

// platformCall is one tool call as a platform delivered it.
type platformCall struct {
	ID   string // the platform's tool-call ID
	Name string
	Args json.RawMessage // a JSON object
}

// platformRequest is one delivery: the phone call it belongs to and its
// tool calls (Vapi sends several at once).
type platformRequest struct {
	CallID string
	// Caller is the caller's number as the platform knows it: the tools
	// take it as the customer when the model leaves it out.
	Caller string
	Calls  []platformCall
}

// platformResult is one tool call's answer.
type platformResult struct {
	ID string
	// Output is the tool's answer (JSON) as the HTTP variant gives it,
	// byte for byte the first answer on every redelivery.
	Output json.RawMessage
	// Error is what the model reads when the tool failed.
	Error string
}

// adapter is one platform's wire format and authentication.
type adapter interface {
	// signed: the platform signs every delivery, so a tenant without its
	// secret in VOICE_PLATFORM_SECRETS cannot be served.
	signed() bool
	// verify checks the platform's signature of body with secret.
	verify(h http.Header, body []byte, secret string, now time.Time) error
	// parse reads a delivery; errIgnored marks a message that calls no tool.
	parse(r *http.Request, body []byte) (platformRequest, error)
	// write answers in the platform's format, one result per call.
	write(w http.ResponseWriter, results []platformResult)
}

// errIgnored: the platform sent a message that calls no tool (a status
// update to a server URL shared with other events); it is acknowledged.
var errIgnored = errors.New("not a tool call")

// adapters are the platforms' wire formats.
var adapters = map[Platform]adapter{
	PlatformVapi:       vapi{},
	PlatformRetell:     retell{},
	PlatformElevenLabs: elevenLabs{},
}

// inFlightPoll bounds the pause between two looks at a redelivered tool
// call whose first delivery is still running.
const inFlightPoll = 250 * time.Millisecond

// servePlatform takes one platform delivery for the authenticated tenant:
// verify, run every tool call once per (phone call, tool call), answer in
// the platform's format.
func (s *Service) servePlatform(limiter *web.AuthLimiter, plain, keyed http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := Platform(r.PathValue("platform"))
		ad, ok := adapters[p]
		if !ok {
			web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "unknown_platform", "no voice platform named "+string(p)+"; see docs/voice-platforms.md"))
			return
		}
		tenant, _ := web.Tenant(r.Context())
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, idempotency.MaxBodyBytes))
		if err != nil {
			web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "malformed_body", "read the delivery: "+err.Error()))
			return
		}
		secret, ok := s.platformSecret(tenant, p)
		if !ok && ad.signed() {
			web.WriteProblem(w, web.NewProblem(http.StatusForbidden, "platform_not_configured",
				string(p)+" signs its tool calls: put the key it signs with into VOICE_PLATFORM_SECRETS for this tenant (docs/voice-platforms.md)"))
			return
		}
		if ok {
			if err := ad.verify(r.Header, body, secret, s.now()); err != nil {
				if wait, blocked := limiter.Blocked(r); blocked {
					web.TooManyFailures(w, wait)
					return
				}
				limiter.Failed(r)
				web.WriteProblem(w, web.NewProblem(http.StatusUnauthorized, "bad_signature", string(p)+" signature: "+err.Error()))
				return
			}
		}
		req, err := ad.parse(r, body)
		if errors.Is(err, errIgnored) {
			web.WriteJSON(w, http.StatusOK, struct{}{})
			return
		}
		if err != nil {
			web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "malformed_body", err.Error()))
			return
		}
		ad.write(w, s.runPlatformCalls(r, p, req, plain, keyed))
	})
}

func (s *Service) platformSecret(tenant string, p Platform) (string, bool) {
	if s.PlatformSecrets == nil {
		return "", false
	}
	return s.PlatformSecrets(tenant, p)
}

// runPlatformCalls runs a delivery's tool calls side by side, as the model
// asked for them together.
func (s *Service) runPlatformCalls(r *http.Request, p Platform, req platformRequest, plain, keyed http.Handler) []platformResult {
	out := make([]platformResult, len(req.Calls))
	var wg sync.WaitGroup
	for i, c := range req.Calls {
		wg.Go(func() { out[i] = s.runPlatformCall(r, p, req, c, plain, keyed) })
	}
	wg.Wait()
	return out
}

// runPlatformCall runs one tool call through the HTTP variant, keyed by
// the platform's call and tool-call IDs: a redelivery replays the first
// answer; one that meets the first still running waits for it.
func (s *Service) runPlatformCall(r *http.Request, p Platform, req platformRequest, c platformCall, plain, keyed http.Handler) platformResult {
	t, ok := toolNamed(c.Name)
	if !ok {
		return platformResult{ID: c.ID, Error: "no tool named " + c.Name + "; the tools are listed at GET " + RouteTools}
	}
	args, err := withCaller(t, c.Args, req.Caller)
	if err != nil {
		return platformResult{ID: c.ID, Error: err.Error()}
	}
	h := keyed
	if t.annotations.ReadOnlyHint {
		h = plain
	}
	// The call runs detached from the delivery: a platform that hangs up
	// or times out must not cut it short and leave its key held (its
	// redelivery would wait for the lease); it finishes and stores its
	// answer, and the customer learns the outcome by message.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.wait()+decideTimeout)
	defer cancel()
	for {
		rec := web.NewRecorder()
		h.ServeHTTP(rec, toolRequest(ctx, r, t, platformKey(p, req.CallID, c.ID), args))
		if rec.Status() != http.StatusConflict {
			return resultOf(c.ID, rec)
		}
		select {
		case <-r.Context().Done():
			return platformResult{ID: c.ID, Error: "the delivery was given up"}
		case <-ctx.Done():
			return platformResult{ID: c.ID, Error: "this tool call is still being processed; call the tool again with the same arguments: it acts once"}
		case <-time.After(inFlightPoll):
		}
	}
}

// platformKey is a tool call's Idempotency-Key: the platform's phone call
// and tool-call IDs, hashed to the key's length and alphabet.
func platformKey(p Platform, callID, toolCallID string) string {
	sum := sha256.Sum256([]byte(string(p) + "\x00" + callID + "\x00" + toolCallID))
	return string(p) + "-" + hex.EncodeToString(sum[:20])
}

// toolRequest is the HTTP variant's request for one tool call, carrying
// the delivery's tenant and token.
func toolRequest(ctx context.Context, from *http.Request, t tool, key string, args []byte) *http.Request {
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, RouteTools+"/"+string(t.name), bytes.NewReader(args))
	tenant, _ := web.Tenant(from.Context())
	r = r.WithContext(web.WithTenant(ctx, tenant))
	r.SetPathValue("name", string(t.name))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", from.Header.Get("Authorization"))
	r.Header.Set(idempotency.HeaderKey, key)
	r.RemoteAddr = from.RemoteAddr
	return r
}

// withCaller fills a tool's customer argument with the caller's number
// when the model left it out: a voice agent knows who is calling.
func withCaller(t tool, args json.RawMessage, caller string) ([]byte, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, errors.New("the arguments must be a JSON object")
	}
	if caller == "" || (t.name != ToolBookAppointment && t.name != ToolListBookings) {
		return args, nil
	}
	if v, ok := m["customer"]; ok && string(v) != `""` && string(v) != "null" {
		return args, nil
	}
	num, err := json.Marshal(caller)
	if err != nil {
		return nil, err
	}
	m["customer"] = num
	return json.Marshal(m)
}

// resultOf is a tool's answer as a platform result: the tool's JSON, or
// the problem's detail as the error the model reads.
func resultOf(id string, r *web.Recorder) platformResult {
	if r.Status() == http.StatusOK {
		return platformResult{ID: id, Output: bytes.Clone(r.Body())}
	}
	var p web.Problem
	if err := json.Unmarshal(r.Body(), &p); err != nil || p.Detail == "" {
		return platformResult{ID: id, Error: "the tool failed (" + http.StatusText(r.Status()) + "); call it again with the same arguments: it acts once"}
	}
	return platformResult{ID: id, Error: p.Detail}
}

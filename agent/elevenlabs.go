package agent

import (
	"errors"
	"net/http"
	"time"
)

// The headers an ElevenLabs server tool is configured to send, filled by
// its system dynamic variables: {{system__conversation_id}} and
// {{system__caller_id}}.
const (
	ElevenLabsConversationHeader = "X-Conversation-Id"
	ElevenLabsCallerHeader       = "X-Caller-Id"
)

// elevenLabs is an ElevenLabs Agents server (webhook) tool: a POST to a
// URL per tool, RoutePlatforms + "/elevenlabs/<tool>", whose body is the
// arguments as the tool's request body schema describes them; the answer's
// body is what the model reads.
type elevenLabs struct{}

// ElevenLabs signs no tool call: the tenant's API token, kept as a
// workspace secret and sent as the Authorization header, authenticates it.
func (elevenLabs) signed() bool { return false }

func (elevenLabs) verify(http.Header, []byte, string, time.Time) error { return nil }

func (elevenLabs) parse(r *http.Request, body []byte) (platformRequest, error) {
	name := r.PathValue("tool")
	conv := r.Header.Get(ElevenLabsConversationHeader)
	if name == "" || conv == "" {
		return platformRequest{}, errors.New("an ElevenLabs server tool posts to " + RoutePlatforms + "/elevenlabs/<tool> with " +
			ElevenLabsConversationHeader + ": {{system__conversation_id}} (docs/voice-platforms.md)")
	}
	id, err := argsCallID(name, body)
	if err != nil {
		return platformRequest{}, err
	}
	return platformRequest{CallID: conv, Caller: r.Header.Get(ElevenLabsCallerHeader),
		Calls: []platformCall{{ID: id, Name: name, Args: body}}}, nil
}

func (elevenLabs) write(w http.ResponseWriter, results []platformResult) { writeBody(w, results[0]) }

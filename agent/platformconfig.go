package agent

import (
	"fmt"
	"strings"
)

// platformTools are the tools a voice agent gets: the booking tools
// without begin_operation (a platform's call and tool-call IDs name the
// operation) and without reschedule_booking (not available yet).
var platformTools = []ToolName{ToolListServices, ToolFindSlots, ToolBookAppointment, ToolGetBooking, ToolListBookings, ToolCancelBooking}

// TokenPlaceholder stands for the tenant's API token in a printed
// configuration: the token is a secret the shop pastes itself.
const TokenPlaceholder = "<the tenant's API token, bkapi_…>"

// PlatformConfig is the tool configuration to paste into platform p for
// the agent listener at baseURL (https://agent.example): the same schemas
// as MCP and the HTTP door, in the platform's own shape, each pointing at
// the platform's route, with its timeout and what the caller hears while
// a tool runs. lang is the shop's language ("de" or "en").
func PlatformConfig(p Platform, baseURL, lang string) ([]map[string]any, error) {
	base := strings.TrimSuffix(baseURL, "/") + RoutePlatforms + "/" + string(p)
	wait := "Einen Moment bitte, ich schaue nach."
	if lang == "en" {
		wait = "One moment please, let me check."
	}
	var out []map[string]any
	for _, name := range platformTools {
		t, _ := toolNamed(string(name))
		switch p {
		case PlatformVapi:
			out = append(out, map[string]any{
				"type":     "function",
				"function": map[string]any{"name": string(t.name), "description": t.description, "parameters": t.in},
				"server": map[string]any{"url": base, "timeoutSeconds": int(VapiDefaultTimeout.Seconds()),
					"headers": map[string]string{"Authorization": "Bearer " + TokenPlaceholder}},
				"messages": []map[string]any{{"type": "request-start", "content": wait}},
			})
		case PlatformRetell:
			out = append(out, map[string]any{
				"type": "custom", "name": string(t.name), "description": t.description, "url": base, "method": "POST",
				"parameters": t.in, "timeout_ms": RetellDefaultTimeout.Milliseconds(),
				"headers":                map[string]string{"Authorization": "Bearer " + TokenPlaceholder},
				"speak_during_execution": !t.annotations.ReadOnlyHint, "execution_message_description": wait,
			})
		case PlatformElevenLabs:
			out = append(out, map[string]any{
				"type": "webhook", "name": string(t.name), "description": t.description,
				"response_timeout_secs": int(ElevenLabsDefaultTimeout.Seconds()),
				"api_schema": map[string]any{
					"url": base + "/" + string(t.name), "method": "POST", "request_body_schema": t.in,
					"request_headers": map[string]any{
						"Authorization":              map[string]string{"secret_id": "<the workspace secret holding: Bearer " + TokenPlaceholder + ">"},
						ElevenLabsConversationHeader: map[string]string{"dynamic_variable": "system__conversation_id"},
						ElevenLabsCallerHeader:       map[string]string{"dynamic_variable": "system__caller_id"},
					},
				},
			})
		default:
			return nil, fmt.Errorf("no voice platform named %q; the platforms are vapi, retell and elevenlabs", p)
		}
	}
	return out, nil
}

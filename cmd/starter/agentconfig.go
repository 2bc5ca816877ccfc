package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bookonce/bookonce/agent"
)

// agentConfigCmd prints the tool configuration to paste into a voice
// platform (docs/voice-platforms.md): the booking tools' schemas in the
// platform's shape, pointing at the agent listener's public URL. It holds
// no secret: the tenant's token is a placeholder the shop fills in.
func agentConfigCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("agent-config", "--platform vapi|retell|elevenlabs --url https://<agent host> [--lang de|en]")
	platform := fs.String("platform", "", "the voice platform: vapi, retell or elevenlabs")
	url := fs.String("url", "", "the agent listener's public HTTPS URL (AGENT_LISTEN behind your proxy)")
	lang := fs.String("lang", "de", "the language of what the caller hears while a tool runs: de or en")
	if err := parse(fs, args, stdout, nil); err != nil {
		return err
	}
	switch {
	case *platform == "":
		return usageFailure(fs, errors.New("--platform is required: vapi, retell or elevenlabs"))
	case !strings.HasPrefix(*url, "https://"):
		return usageFailure(fs, fmt.Errorf("--url must be the agent listener's public https:// URL (the platforms call only HTTPS), got %q", *url))
	case *lang != "de" && *lang != "en":
		return usageFailure(fs, fmt.Errorf("--lang must be de or en, got %q", *lang))
	}
	tools, err := agent.PlatformConfig(agent.Platform(*platform), *url, *lang)
	if err != nil {
		return usageFailure(fs, err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(tools)
}

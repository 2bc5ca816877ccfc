package stack

import (
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/internal/web"
)

// EncryptPayloads is the DialOption that encrypts payloads and failure
// texts with the configured keys (BOOKONCE_PAYLOAD_KEYS); without keys it
// changes nothing. Dial applies it to every client it makes.
func EncryptPayloads(cfg config.Config) DialOption {
	return func(o *client.Options, log *slog.Logger) error {
		if cfg.PayloadCodec != nil {
			cfg.PayloadCodec.Apply(o)
			log.Debug("Temporal payloads encrypted", "current_key", cfg.PayloadCodec.CurrentKeyID())
		}
		return nil
	}
}

// HandleCodec registers the codec server under payloadcrypt.CodecRoute
// on mux when payload keys are configured: the operators' side of the
// gateway, next to the ops page, whose sign-in (a tenant's bearer token or
// ops session) tenantOf checks; such a caller decodes only its tenant's
// payloads. The operator codec token (CODEC_OPERATOR_TOKEN, as a bearer
// token) decodes every tenant's. The Web UIs of cfg.CodecOrigins may call it.
func HandleCodec(mux *http.ServeMux, cfg config.Config, tenantOf func(*http.Request) (string, bool), log *slog.Logger) {
	if cfg.PayloadCodec == nil {
		return
	}
	mux.Handle(payloadcrypt.CodecRoute+"/", payloadcrypt.CodecServer{
		Codec: cfg.PayloadCodec, Authorize: codecCaller(cfg.CodecOperatorToken, tenantOf), Origins: cfg.CodecOrigins, Logger: log.With("service", "codec"),
	}.Handler())
}

// codecCaller is the codec server's Authorizer: the operator token (if
// configured) makes an operator, else tenantOf names the tenant. The
// operator token is checked first, so it never spends the ops page's
// failure budget.
func codecCaller(operatorToken string, tenantOf func(*http.Request) (string, bool)) payloadcrypt.Authorizer {
	return func(r *http.Request) (payloadcrypt.Caller, bool) {
		if operatorToken != "" && r.Header.Get("Authorization") != "" &&
			subtle.ConstantTimeCompare([]byte(web.BearerToken(r.Header)), []byte(operatorToken)) == 1 {
			return payloadcrypt.Caller{Operator: true}, true
		}
		tenant, ok := tenantOf(r)
		return payloadcrypt.Caller{Tenant: tenant}, ok && tenant != ""
	}
}

// CodecEndpoint is the codec server's URL as a browser on this host
// reaches it: the gateway's admin listen address (ADMIN_LISTEN, where the
// ops page and its sign-in live; 0.0.0.0 read as loopback) and
// payloadcrypt.CodecRoute.
func CodecEndpoint(cfg config.Config) string {
	host := strings.Replace(cfg.AdminListen, "0.0.0.0:", "127.0.0.1:", 1)
	if strings.HasPrefix(host, ":") {
		host = "127.0.0.1" + host
	}
	return "http://" + host + payloadcrypt.CodecRoute
}

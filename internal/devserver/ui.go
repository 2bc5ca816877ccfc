package devserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"github.com/temporalio/ui-server/v2/server/server_options"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/log"
)

// UI is the Temporal Web UI served from the assets inside the ui-server
// module, so it works without network access.
type UI struct {
	srv  *server.Server
	addr string
}

// UIOption changes the Web UI's configuration.
type UIOption func(*uiconfig.Config)

// WithCodec makes the Web UI decode payloads through the codec server at
// endpoint (it POSTs to endpoint+"/decode"), sending the browser's
// cookies for that server (the ops session), so an operator signed in
// there reads payloads in clear and anyone else sees ciphertext.
func WithCodec(endpoint string) UIOption {
	return func(c *uiconfig.Config) {
		c.Codec = uiconfig.Codec{Endpoint: endpoint, IncludeCredentials: true,
			DefaultErrorMessage: "Payloads are encrypted: sign in to the ops page to read them here."}
	}
}

// StartUI serves the Web UI on host:port for the frontend at temporalAddr.
func StartUI(ctx context.Context, temporalAddr, host string, port int, namespace string, opts ...UIOption) (*UI, error) {
	if err := probeFree(host, port); err != nil {
		return nil, fmt.Errorf("web UI: %w", err)
	}
	cfg := &uiconfig.Config{
		Host:                host,
		Port:                port,
		TemporalGRPCAddress: temporalAddr,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		HideLogs:            true,
		DisableNewsFetch:    true, // no internet in many dev setups
		CORS:                uiconfig.CORS{CookieInsecure: true},
		RefreshInterval:     time.Minute,
	}
	for _, opt := range opts {
		opt(cfg)
	}
	srv := server.NewServer(server_options.WithConfigProvider(cfg))
	u := &UI{srv: srv, addr: net.JoinHostPort(host, strconv.Itoa(port))}
	errc := make(chan error, 1)
	go func() { errc <- srv.Start() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-errc:
			return nil, fmt.Errorf("web UI: %w", err)
		default:
		}
		resp, err := http.Get(u.URL() + "/")
		if err == nil {
			resp.Body.Close()
			return u, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			srv.Stop()
			return nil, errors.Join(errors.New("web UI did not answer"), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL is where a browser opens the UI.
func (u *UI) URL() string { return "http://" + u.addr }

// Stop shuts the UI down.
func (u *UI) Stop() { u.srv.Stop() }

func describeNamespace(ns string) *workflowservice.DescribeNamespaceRequest {
	return &workflowservice.DescribeNamespaceRequest{Namespace: ns}
}

// quietLogger keeps the SDK's dial retries out of the dev console.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

var _ log.Logger = quietLogger{}

package web

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServersHaveTimeoutsAndHeaderLimit: every server internal/web builds
// (NewServer, and the one a Service serves on) bounds how long a client
// may take and how large its headers may be.
func TestServersHaveTimeoutsAndHeaderLimit(t *testing.T) {
	for name, srv := range map[string]*http.Server{
		"NewServer": NewServer(http.NotFoundHandler()),
		"Service":   Service{Name: "test"}.server(context.Background()),
	} {
		t.Run(name, func(t *testing.T) {
			require.Positive(t, srv.ReadHeaderTimeout, "ReadHeaderTimeout")
			require.Positive(t, srv.ReadTimeout, "ReadTimeout")
			require.Positive(t, srv.WriteTimeout, "WriteTimeout")
			require.Positive(t, srv.IdleTimeout, "IdleTimeout")
			require.Positive(t, srv.MaxHeaderBytes, "MaxHeaderBytes")
			require.NotNil(t, srv.Handler)
		})
	}
}

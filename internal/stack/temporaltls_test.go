package stack_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	serverconfig "go.temporal.io/server/common/config"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// serverName is the name in the test server's certificate; the client
// verifies it by TEMPORAL_TLS_SERVER_NAME (it dials 127.0.0.1).
const serverName = "temporal.bookonce.test"

// TestTemporalMutualTLSByTheSDKVariables starts an in-process Temporal
// server whose frontend requires client certificates signed by a CA
// generated here, and dials it as every bookonce process does (the
// configuration from the environment, stack.Dial): with the client
// certificate of TEMPORAL_TLS_CLIENT_CERT_PATH and _KEY_PATH a worker
// runs a workflow; without a certificate, or without TLS, the server
// refuses the connection.
func TestTemporalMutualTLSByTheSDKVariables(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ca := testsupport.NewCA(t, "bookonce test CA")
	caPath, _ := ca.Write(t, "ca")
	clientCert, clientKey := ca.Client(t, "bookonce-worker").Write(t, "client")
	addr := startTLSTemporal(t, ctx, ca)

	vars := map[string]string{
		"TEMPORAL_ADDRESS": addr, config.TemporalServerCAVar: caPath, config.TemporalServerNameVar: serverName,
		config.TemporalClientCertVar: clientCert, config.TemporalClientKeyVar: clientKey,
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tc, err := stack.Dial(ctx, load(t, vars), log)
	require.NoError(t, err, "the client with the CA's certificate connects")
	t.Cleanup(tc.Close)
	queue := testsupport.TaskQueue(t)
	w := worker.New(tc, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, s string) (string, error) { return "hello " + s, nil },
		workflow.RegisterOptions{Name: "greet"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue, WorkflowExecutionTimeout: time.Minute}, "greet", "mtls")
	require.NoError(t, err)
	var got string
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, "hello mtls", got)

	refused := []struct {
		name string
		vars map[string]string
	}{
		{"TLS without a client certificate", map[string]string{"TEMPORAL_ADDRESS": addr, config.TemporalServerCAVar: caPath, config.TemporalServerNameVar: serverName}},
		{"no TLS", map[string]string{"TEMPORAL_ADDRESS": addr}},
	}
	for _, r := range refused {
		t.Run(r.name, func(t *testing.T) {
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			c, err := stack.Dial(dctx, load(t, r.vars), log)
			if err == nil {
				c.Close()
			}
			require.Error(t, err, "the server refuses the client")
			// The handshake fails ("certificate required", or the pipe the
			// server closed first), not the client's own configuration.
			require.ErrorContains(t, err, "failed reaching server")
		})
	}
}

// load is the configuration of vars alone.
func load(t *testing.T, vars map[string]string) config.Config {
	t.Helper()
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	require.NoError(t, err)
	return cfg
}

// startTLSTemporal starts an in-process server whose frontend presents a
// certificate of ca and requires client certificates of ca (its system
// workers present one too); it returns the frontend's address.
func startTLSTemporal(t *testing.T, ctx context.Context, ca testsupport.CA) string {
	t.Helper()
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	srv, sys := ca.Server(t, serverName), ca.Client(t, "temporal-system-worker")
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(ca.CertPEM))
	sysPair, err := tls.X509KeyPair(sys.CertPEM, sys.KeyPEM)
	require.NoError(t, err)
	rootTLS := &serverconfig.RootTLS{
		Frontend: serverconfig.GroupTLS{Server: serverconfig.ServerTLS{
			CertData: b64(srv.CertPEM), KeyData: b64(srv.KeyPEM), ClientCAData: []string{b64(ca.CertPEM)}, RequireClientAuth: true,
		}},
		SystemWorker: serverconfig.WorkerTLS{CertData: b64(sys.CertPEM), KeyData: b64(sys.KeyPEM),
			Client: serverconfig.ClientTLS{ServerName: serverName, RootCAData: []string{b64(ca.CertPEM)}}},
	}
	temporal, err := devserver.StartTemporal(ctx, devserver.Options{Address: "127.0.0.1:0", TLS: rootTLS,
		ClientTLS: &tls.Config{RootCAs: roots, ServerName: serverName, Certificates: []tls.Certificate{sysPair}, MinVersion: tls.VersionTLS12}})
	require.NoError(t, err, "start a Temporal server with mTLS")
	t.Cleanup(func() { _ = temporal.Stop() })
	return temporal.HostPort()
}

// TestTemporalAPIKeyIsSentAsCredentials: TEMPORAL_API_KEY reaches the
// server as "authorization: Bearer <key>" on every call, over TLS (an API
// key turns TLS on), and appears in no log line of the dialling process.
func TestTemporalAPIKeyIsSentAsCredentials(t *testing.T) {
	const key = "tmprl-api-key-do-not-log-0123456789"
	ca := testsupport.NewCA(t, "bookonce test CA")
	caPath, _ := ca.Write(t, "ca")
	srvCert := ca.Server(t, serverName)
	pair, err := tls.X509KeyPair(srvCert.CertPEM, srvCert.KeyPEM)
	require.NoError(t, err)
	seen := make(chan []string, 16)
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			md, _ := metadata.FromIncomingContext(ctx)
			seen <- md.Get("authorization")
			return h(ctx, req)
		}))
	workflowservice.RegisterWorkflowServiceServer(srv, workflowservice.UnimplementedWorkflowServiceServer{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := load(t, map[string]string{"TEMPORAL_ADDRESS": l.Addr().String(), config.TemporalAPIKeyVar: key,
		config.TemporalServerCAVar: caPath, config.TemporalServerNameVar: serverName})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := stack.Dial(ctx, cfg, log)
	if err == nil {
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		c.Close()
	}
	require.Equal(t, []string{"Bearer " + key}, <-seen, "the first call carries the key")
	if err != nil {
		require.NotContains(t, err.Error(), key)
	}
	require.NotContains(t, logs.String(), key, "the key is never logged")
	require.NotContains(t, fmt.Sprintf("%+v", cfg.TemporalOptions().Credentials), key)
}

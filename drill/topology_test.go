package drill

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// backend answers its name and the body it was posted.
func backend(t *testing.T, name string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = io.WriteString(w, name+":"+string(b))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// deadAddr is a loopback address nobody listens on (a killed replica).
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestRoundRobinAlternatesAndSkipsDeadReplicas: the scaled topology's load
// balancer sends each request to the next replica, and a replica that
// refuses the connection (killed) is skipped with the whole body.
func TestRoundRobinAlternatesAndSkipsDeadReplicas(t *testing.T) {
	a, b, dead := backend(t, "a"), backend(t, "b"), deadAddr(t)
	cases := []struct {
		name    string
		targets []string
		want    []string
	}{
		{"alternates", []string{a, b}, []string{"a:x", "b:x", "a:x", "b:x"}},
		{"skips a dead replica", []string{a, dead}, []string{"a:x", "a:x", "a:x"}},
		{"dead first", []string{dead, b}, []string{"b:x", "b:x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(newRoundRobin(tc.targets))
			t.Cleanup(srv.Close)
			var got []string
			for range tc.want {
				resp, err := http.Post(srv.URL+"/v1/x", "text/plain", strings.NewReader("x"))
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
				got = append(got, string(body))
			}
			require.Equal(t, tc.want, got)
		})
	}
	t.Run("no replica up", func(t *testing.T) {
		srv := httptest.NewServer(newRoundRobin([]string{dead, deadAddr(t)}))
		t.Cleanup(srv.Close)
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/healthz", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	})
}

// TestKillTargetsKeepTheSingleTopologysDraw: the killer draws from
// calendar then payments (the single topology's order, so a seed kills
// what it always killed), then the gateway replicas.
func TestKillTargetsKeepTheSingleTopologysDraw(t *testing.T) {
	svc := func(name string) *service { return &service{name: name} }
	single := map[string][]*service{upstreamPayments: {svc("payments")}, upstreamCalendar: {svc("calendar")}}
	scaled := map[string][]*service{
		upstreamGateway:  {svc("gateway-1"), svc("gateway-2")},
		upstreamPayments: {svc("payments-1"), svc("payments-2")}, upstreamCalendar: {svc("calendar-1"), svc("calendar-2")},
	}
	names := func(l []*service) []string {
		var out []string
		for _, s := range l {
			out = append(out, s.name)
		}
		return out
	}
	require.Equal(t, []string{"calendar", "payments"}, names(killTargets(single)))
	require.Equal(t, []string{"calendar-1", "calendar-2", "payments-1", "payments-2", "gateway-1", "gateway-2"}, names(killTargets(scaled)))
}

package stack_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestCalendarAPISealsStoredResponses: the calendar API built by the
// stack with payload keys stores its idempotent responses sealed (a hold
// quotes the customer's number) and replays them byte for byte.
func TestCalendarAPISealsStoredResponses(t *testing.T) {
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	k := payloadcrypt.Key{ID: "test-1", Secret: make([]byte, payloadcrypt.KeySize)}
	_, err := rand.Read(k.Secret)
	require.NoError(t, err)
	cfg.PayloadCodec, err = payloadcrypt.New([]payloadcrypt.Key{k})
	require.NoError(t, err)
	srv := stacktest.CalendarAPI(t, cfg, pool)

	start := time.Now().In(cfg.Timezone).AddDate(0, 0, 7)
	for start.Weekday() != time.Tuesday {
		start = start.AddDate(0, 0, 1)
	}
	start = time.Date(start.Year(), start.Month(), start.Day(), 10, 0, 0, 0, cfg.Timezone)
	body := `{"service":"tire-change","start":"` + start.Format(time.RFC3339) + `","customer":"` + privatePhone + `","reference":"ref-sealed"}`
	hold := func() (int, []byte) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/holds", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+config.DefaultAPIToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "hold-sealed")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b
	}
	status, first := hold()
	require.Equal(t, http.StatusCreated, status, "%s", first)
	require.Contains(t, string(first), privatePhone)

	var row string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT k::text FROM idempotency_keys k
		WHERE idempotency_key = 'hold-sealed' AND sealed IS NOT NULL AND response_body = ''::bytea`).Scan(&row))
	require.NotContains(t, row, privatePhone)
	require.NotContains(t, row, hex.EncodeToString([]byte(privatePhone)))

	status, replay := hold()
	require.Equal(t, http.StatusCreated, status)
	require.True(t, bytes.Equal(first, replay), "byte-identical replay")
}

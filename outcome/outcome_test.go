package outcome_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/outcome"
)

func TestOfStatus(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   outcome.Outcome
	}{
		{http.StatusBadRequest, outcome.Final},
		{http.StatusPaymentRequired, outcome.Final},
		{http.StatusNotFound, outcome.Final},
		{http.StatusConflict, outcome.Final},
		{http.StatusUnprocessableEntity, outcome.Final},
		{http.StatusTooManyRequests, outcome.Retryable},
		{http.StatusInternalServerError, outcome.Retryable},
		{http.StatusBadGateway, outcome.Unknown},
		{http.StatusServiceUnavailable, outcome.Unknown},
		{http.StatusGatewayTimeout, outcome.Unknown},
		{599, outcome.Retryable},
		{http.StatusNotModified, outcome.Unknown},
		{0, outcome.Unknown},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			require.Equal(t, tc.want, outcome.OfStatus(tc.status))
		})
	}
}

type classed struct{ o outcome.Outcome }

func (c classed) Error() string          { return "classed" }
func (c classed) Class() outcome.Outcome { return c.o }

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want outcome.Outcome
	}{
		{"no failure", nil, 0},
		{"classed", classed{outcome.Final}, outcome.Final},
		{"wrapped classed", fmt.Errorf("send: %w", classed{outcome.Retryable}), outcome.Retryable},
		{"foreign error", errors.New("connection reset"), outcome.Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, outcome.Of(tc.err))
		})
	}
}

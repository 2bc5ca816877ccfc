package shopcal

import (
	"errors"
	"fmt"
	"net/http"

	"golang.org/x/oauth2"

	"github.com/bookonce/bookonce/outcome"
)

// tokenError classifies a call that failed at the provider's OAuth token
// endpoint (ok false: it did not): its refusal (consent withdrawn, a
// revoked refresh token, the app's secret wrong) is final, for a person
// to reconnect; its 5xx and 429 are retried.
func tokenError(op, provider string, err error) (*Error, bool) {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return nil, false
	}
	class := outcome.Final
	if s := responseStatus(re.Response); s >= 500 || s == http.StatusTooManyRequests {
		class = outcome.Retryable
	}
	return &Error{Op: op, Status: responseStatus(re.Response), Outcome: class, Err: fmt.Errorf("%s token: %s", provider, re.ErrorCode)}, true
}

func responseStatus(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

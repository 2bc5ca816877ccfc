package twilio_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	twiliogo "github.com/twilio/twilio-go"
	twclient "github.com/twilio/twilio-go/client"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/bookonce/bookonce/twilio"
)

// rewrite sends twilio-go's https://api.twilio.com requests to the fake.
type rewrite struct{ target *url.URL }

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = r.target.Scheme, r.target.Host, r.target.Host
	return http.DefaultTransport.RoundTrip(out)
}

// restClient is the unmodified twilio-go client, pointed at the fake by
// its HTTP transport only.
func restClient(t *testing.T, f *twilio.FakeServer, token string) *twiliogo.RestClient {
	t.Helper()
	u, err := url.Parse(f.URL())
	require.NoError(t, err)
	c := &twclient.Client{
		Credentials: twclient.NewCredentials(f.AccountSID, token),
		HTTPClient:  &http.Client{Transport: rewrite{u}, Timeout: 10 * time.Second},
	}
	c.SetAccountSid(f.AccountSID)
	return twiliogo.NewRestClientWithParams(twiliogo.ClientParams{Client: c})
}

func newFake(t *testing.T) *twilio.FakeServer {
	f := twilio.NewFakeServer()
	t.Cleanup(f.Close)
	return f
}

func TestFakeWithTwilioGo(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	rc := restClient(t, f, f.AuthToken)
	f.Inbound("whatsapp:+4915112345678", "whatsapp:+4930123456", "Hallo") // the customer wrote: free text may answer

	p := &openapi.CreateMessageParams{}
	p.SetTo("whatsapp:+4915112345678").SetFrom("whatsapp:+4930123456").SetBody("Ihr Termin: Dienstag 14 Uhr").
		SetStatusCallback("https://bookonce.example/webhooks/twilio/status?outbox_id=msg_1")
	m, err := rc.Api.CreateMessage(p)
	require.NoError(t, err)
	require.Regexp(t, `^SM[0-9a-f]{32}$`, *m.Sid)
	require.Equal(t, "queued", *m.Status)
	require.Nil(t, m.DateSent)
	require.Equal(t, "whatsapp:+4915112345678", *m.To)
	require.Equal(t, "whatsapp:+4930123456", *m.From)
	require.Equal(t, "Ihr Termin: Dienstag 14 Uhr", *m.Body)
	require.Equal(t, f.AccountSID, *m.AccountSid)
	require.Equal(t, "outbound-api", *m.Direction)
	created, err := time.Parse(time.RFC1123Z, *m.DateCreated)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), created, time.Minute)

	got := f.Messages()
	require.Len(t, got, 1)
	require.Equal(t, *m.Sid, got[0].Sid)
	require.Equal(t, "https://bookonce.example/webhooks/twilio/status?outbox_id=msg_1", got[0].StatusCallback)

	fetched, err := rc.Api.FetchMessage(*m.Sid, nil)
	require.NoError(t, err)
	require.Equal(t, "sent", *fetched.Status)
	require.NotNil(t, fetched.DateSent)

	_, err = rc.Api.FetchMessage("SM00000000000000000000000000000000", nil)
	var rest *twclient.TwilioRestError
	require.ErrorAs(t, err, &rest)
	require.Equal(t, 404, rest.Status)
	require.Equal(t, 20404, rest.Code)
}

func TestFakeListFiltersAndPages(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	rc := restClient(t, f, f.AuthToken)
	day := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	clock := day.Add(-48 * time.Hour)
	f.SetNow(func() time.Time { return clock })

	send := func(to, body string) string {
		p := &openapi.CreateMessageParams{}
		p.SetTo(to).SetFrom("+4930123456").SetBody(body)
		m, err := rc.Api.CreateMessage(p)
		require.NoError(t, err)
		return *m.Sid
	}
	send("+4915100000001", "two days ago")
	clock = day
	var recent []string
	for i := range 5 {
		clock = day.Add(time.Duration(i) * time.Minute)
		recent = append(recent, send("+4915100000001", "today"))
	}
	send("+4915100000002", "someone else")

	lp := &openapi.ListMessageParams{}
	lp.SetTo("+4915100000001").SetDateSentAfter(day).SetPageSize(2)
	list, err := rc.Api.ListMessage(lp)
	require.NoError(t, err)
	var sids []string
	for _, m := range list {
		sids = append(sids, *m.Sid)
	}
	// Newest first, across three pages of two.
	require.Equal(t, []string{recent[4], recent[3], recent[2], recent[1], recent[0]}, sids)

	page, err := rc.Api.PageMessage(lp, "", "")
	require.NoError(t, err)
	require.Len(t, page.Messages, 2)
	require.NotNil(t, page.NextPageUri)
	require.Contains(t, *page.NextPageUri, "PageToken=PA"+recent[3])
	require.Equal(t, 2, page.PageSize)

	// The raw wire: page 1 by its next_page_uri, then back by previous_page_uri.
	get := func(uri string) openapi.ListMessageResponse {
		req, err := http.NewRequest(http.MethodGet, f.URL()+uri, nil)
		require.NoError(t, err)
		req.SetBasicAuth(f.AccountSID, f.AuthToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var out openapi.ListMessageResponse
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return out
	}
	second := get(*page.NextPageUri)
	require.Equal(t, 1, second.Page)
	require.Equal(t, []string{recent[2], recent[1]}, []string{*second.Messages[0].Sid, *second.Messages[1].Sid})
	require.NotNil(t, second.PreviousPageUri)
	back := get(*second.PreviousPageUri)
	require.Equal(t, []string{recent[4], recent[3]}, []string{*back.Messages[0].Sid, *back.Messages[1].Sid})

	all, err := rc.Api.ListMessage((&openapi.ListMessageParams{}).SetTo("+4915100000001"))
	require.NoError(t, err)
	require.Len(t, all, 6)
}

func TestFakeErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t)

	_, err := restClient(t, f, "0000000000000000000000000000000f").Api.CreateMessage(
		(&openapi.CreateMessageParams{}).SetTo("+4915112345678").SetFrom("+4930123456").SetBody("x"))
	var rest *twclient.TwilioRestError
	require.ErrorAs(t, err, &rest)
	require.Equal(t, 401, rest.Status)
	require.Equal(t, 20003, rest.Code)

	rc := restClient(t, f, f.AuthToken)
	_, err = rc.Api.CreateMessage((&openapi.CreateMessageParams{}).SetTo("+123").SetFrom("+4930123456").SetBody("x"))
	require.ErrorAs(t, err, &rest)
	require.Equal(t, 400, rest.Status)
	require.Equal(t, 21211, rest.Code)
	require.Equal(t, "https://www.twilio.com/docs/errors/21211", rest.MoreInfo)

	_, err = rc.Api.CreateMessage((&openapi.CreateMessageParams{}).SetTo("whatsapp:+4915112345678").SetFrom("+4930123456").SetBody("x"))
	require.ErrorAs(t, err, &rest)
	require.Equal(t, 21910, rest.Code)

	f.FailNext(http.StatusTooManyRequests)
	_, err = rc.Api.CreateMessage((&openapi.CreateMessageParams{}).SetTo("+4915112345678").SetFrom("+4930123456").SetBody("x"))
	require.ErrorAs(t, err, &rest)
	require.Equal(t, 429, rest.Status)
	require.Equal(t, 20429, rest.Code)
	require.Empty(t, f.Messages(), "failed requests commit nothing")

	f.DropNextResponse()
	_, err = rc.Api.CreateMessage((&openapi.CreateMessageParams{}).SetTo("+4915112345678").SetFrom("+4930123456").SetBody("lost answer"))
	require.Error(t, err)
	require.Len(t, f.Messages(), 1, "a dropped response still commits the message")
	require.Equal(t, "lost answer", f.Messages()[0].Body)
}

// TestFakeErrorsAreTwilioErrorDocuments: every error the fake answers,
// injected or not, is Twilio's REST error document (code, message,
// more_info, status) as JSON, so the client's rule "only a Twilio error
// code proves absence" meets the same answers the real API gives.
func TestFakeErrorsAreTwilioErrorDocuments(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	post := func(to string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, f.URL()+"/2010-04-01/Accounts/"+f.AccountSID+"/Messages.json",
			strings.NewReader(url.Values{"To": {to}, "From": {"+4930123456"}, "Body": {"x"}}.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(f.AccountSID, f.AuthToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	check := func(resp *http.Response, status, code int) {
		t.Helper()
		require.Equal(t, status, resp.StatusCode)
		require.Contains(t, resp.Header.Get("Content-Type"), "application/json")
		var doc struct {
			Code     int    `json:"code"`
			Message  string `json:"message"`
			MoreInfo string `json:"more_info"`
			Status   int    `json:"status"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
		require.Equal(t, code, doc.Code)
		require.NotEmpty(t, doc.Message)
		require.Equal(t, fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code), doc.MoreInfo)
		require.Equal(t, status, doc.Status)
	}
	check(post("+123"), http.StatusBadRequest, 21211)
	for status, code := range map[int]int{429: 20429, 503: 20503, 500: 20500, 502: 20500, 401: 20003} {
		f.FailNext(status)
		check(post("+4915112345678"), status, code)
	}
	require.Empty(t, f.Messages())
}

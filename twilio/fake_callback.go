package twilio

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// FakeCallback is a status callback the fake posted: the message, the
// status it reported and what the receiver answered.
type FakeCallback struct {
	MessageSid string
	URL        string
	Status     string
	ErrorCode  int
	// HTTPStatus is the receiver's answer (0: none: Err says why).
	HTTPStatus int
	Err        string
}

// statusCallback is the callback form Twilio posts when a message changes
// status (the fields bookonce and twilio-go read).
func statusCallback(m FakeMessage) url.Values {
	form := url.Values{
		"AccountSid": {m.AccountSid}, "ApiVersion": {"2010-04-01"},
		"MessageSid": {m.Sid}, "SmsSid": {m.Sid},
		"MessageStatus": {m.Status}, "SmsStatus": {m.Status},
		"From": {m.From}, "To": {m.To},
	}
	if ch, _ := splitAddress(m.To); ch != "" {
		form.Set("ChannelPrefix", ch)
	}
	if m.ErrorCode != 0 {
		form.Set("ErrorCode", strconv.Itoa(m.ErrorCode))
	}
	return form
}

// report posts m's status to its StatusCallback once, signed as Twilio
// signs webhooks (X-Twilio-Signature with the account's auth token): the
// failures always, "delivered" only when ReportDelivered is set. Twilio
// does not retry a status callback the receiver failed; neither does the
// fake. It runs in its own goroutine; Settle waits for it.
func (f *FakeServer) report(m FakeMessage) {
	if m.StatusCallback == "" || (m.ErrorCode == 0 && !f.reportDelivered()) {
		return
	}
	if m.ErrorCode == 0 {
		m.Status = "delivered"
	}
	f.callbacks.Add(1)
	go func() {
		defer f.callbacks.Done()
		form := statusCallback(m)
		c := FakeCallback{MessageSid: m.Sid, URL: m.StatusCallback, Status: m.Status, ErrorCode: m.ErrorCode}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.StatusCallback, strings.NewReader(form.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Twilio-Signature", Sign(f.AuthToken, m.StatusCallback, form))
			var resp *http.Response
			if resp, err = http.DefaultClient.Do(req); err == nil {
				c.HTTPStatus = resp.StatusCode
				_ = resp.Body.Close()
			}
		}
		if err != nil {
			c.Err = err.Error()
		}
		f.mu.Lock()
		f.posted = append(f.posted, c)
		f.mu.Unlock()
	}()
}

// ReportDelivered makes the fake post a "delivered" status callback for
// every message that reaches its recipient, as Twilio does; without it
// only failures are reported (fewer requests in a drill of thousands).
func (f *FakeServer) ReportDelivered(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delivered = on
}

func (f *FakeServer) reportDelivered() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.delivered
}

// Settle waits until every status callback under way has been answered or
// has failed, and returns those posted so far, oldest first.
func (f *FakeServer) Settle() []FakeCallback {
	f.callbacks.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeCallback(nil), f.posted...)
}

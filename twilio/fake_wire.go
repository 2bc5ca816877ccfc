package twilio

import (
	"strconv"
	"time"
	"unicode/utf8"
)

type wireMessage struct {
	AccountSid          string            `json:"account_sid"`
	APIVersion          string            `json:"api_version"`
	Body                string            `json:"body"`
	DateCreated         string            `json:"date_created"`
	DateSent            *string           `json:"date_sent"`
	DateUpdated         string            `json:"date_updated"`
	Direction           string            `json:"direction"`
	ErrorCode           *int              `json:"error_code"`
	ErrorMessage        *string           `json:"error_message"`
	From                string            `json:"from"`
	MessagingServiceSid *string           `json:"messaging_service_sid"`
	NumMedia            string            `json:"num_media"`
	NumSegments         string            `json:"num_segments"`
	Price               *string           `json:"price"`
	PriceUnit           string            `json:"price_unit"`
	Sid                 string            `json:"sid"`
	Status              string            `json:"status"`
	SubresourceURIs     map[string]string `json:"subresource_uris"`
	To                  string            `json:"to"`
	URI                 string            `json:"uri"`
}

type wireList struct {
	End             int           `json:"end"`
	FirstPageURI    string        `json:"first_page_uri"`
	Messages        []wireMessage `json:"messages"`
	NextPageURI     *string       `json:"next_page_uri"`
	Page            int           `json:"page"`
	PageSize        int           `json:"page_size"`
	PreviousPageURI *string       `json:"previous_page_uri"`
	Start           int           `json:"start"`
	URI             string        `json:"uri"`
}

func wireMessageOf(m FakeMessage) wireMessage {
	uri := "/2010-04-01/Accounts/" + m.AccountSid + "/Messages/" + m.Sid
	w := wireMessage{
		AccountSid:  m.AccountSid,
		APIVersion:  "2010-04-01",
		Body:        m.Body,
		DateCreated: m.DateCreated.UTC().Format(time.RFC1123Z),
		DateUpdated: m.DateCreated.UTC().Format(time.RFC1123Z),
		Direction:   "outbound-api",
		From:        m.From,
		NumMedia:    "0",
		NumSegments: strconv.Itoa(segments(m.Body)),
		PriceUnit:   "USD",
		Sid:         m.Sid,
		Status:      m.Status,
		SubresourceURIs: map[string]string{
			"media":    uri + "/Media.json",
			"feedback": uri + "/Feedback.json",
		},
		To:  m.To,
		URI: uri + ".json",
	}
	if m.ErrorCode != 0 {
		code, msg := m.ErrorCode, errorMessages[m.ErrorCode]
		w.ErrorCode, w.ErrorMessage = &code, &msg
	}
	if !m.DateSent.IsZero() {
		s := m.DateSent.UTC().Format(time.RFC1123Z)
		w.DateSent, w.DateUpdated = &s, s
	}
	return w
}

// errorMessages are the texts of the error codes a fake message can end
// with.
var errorMessages = map[int]string{
	ErrCodeOutsideWindow: "Failed to send freeform message because you are outside the allowed window. If you are using WhatsApp, please use a Message Template.",
	ErrCodeNotOnWhatsApp: "Channel could not find To address",
}

// segments approximates Twilio's SMS segment count (GSM-7 limits).
func segments(body string) int {
	n := utf8.RuneCountInString(body)
	if n <= 160 {
		return 1
	}
	return (n + 152) / 153
}

package twilio

// A message Twilio accepted can still fail on its way: the status
// callback then reports "failed" or "undelivered" with an ErrorCode.

// failures explain the delivery failures a status callback reports, for
// the people who read the outbox on the ops page.
var failures = map[string]string{
	"63016": "free-form WhatsApp text outside the 24-hour customer service window: only an approved template reaches the customer",
	"63003": "the number cannot receive WhatsApp messages",
	"30003": "the handset is unreachable",
	"30005": "unknown destination handset",
	"30006": "landline or unreachable carrier",
	"30007": "filtered by the carrier",
}

// NotOnChannel are the status callback error codes that say the
// recipient cannot be reached on the message's channel at all (63003: no
// WhatsApp account): the message may go by SMS instead.
var NotOnChannel = []string{"63003"}

// DescribeFailure says what a status callback's ErrorCode means ("" for
// none): "delivery failed: Twilio error 63016 (…)".
func DescribeFailure(code string) string {
	if code == "" {
		return ""
	}
	s := "delivery failed: Twilio error " + code
	if why, ok := failures[code]; ok {
		s += " (" + why + ")"
	}
	return s
}

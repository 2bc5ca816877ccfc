package drill

import (
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bookonce/bookonce/chaos"
)

// exchangeLog keeps every request the three fault proxies handled.
type exchangeLog struct {
	mu  sync.Mutex
	all []exchange
}

type exchange struct {
	upstream string
	at       time.Time
	chaos.Exchange
}

func (l *exchangeLog) add(upstream string, x chaos.Exchange) {
	l.mu.Lock()
	l.all = append(l.all, exchange{upstream: upstream, at: time.Now(), Exchange: x})
	l.mu.Unlock()
}

func (l *exchangeLog) snapshot() []exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]exchange(nil), l.all...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// operation names the business operation a mutating request belongs to,
// independent of its key: creating the hold of a booking reference,
// confirming one hold, authorising one booking step, and so on. Retries
// of one operation share it; "" means the request mutates nothing.
func (x exchange) operation() string {
	if x.Method != "POST" {
		return ""
	}
	switch {
	case x.upstream == upstreamCalendar && x.Path == "/v1/holds":
		var body struct {
			Reference string `json:"reference"`
		}
		_ = json.Unmarshal(x.Body, &body)
		return "hold " + body.Reference
	case x.upstream == upstreamPayments && x.Path == "/v1/payment_intents":
		form, _ := url.ParseQuery(string(x.Body))
		return "authorise " + form.Get("metadata[booking_reference]") + " " + form.Get("metadata[step]")
	case x.upstream == upstreamPayments && x.Path == "/v1/checkout/sessions":
		form, _ := url.ParseQuery(string(x.Body))
		return "checkout " + form.Get("client_reference_id")
	case x.upstream == upstreamPayments && x.Path == "/v1/refunds":
		form, _ := url.ParseQuery(string(x.Body))
		return "refund " + form.Get("payment_intent")
	case x.upstream == upstreamTwilio:
		if id := x.outboxID(); id != "" {
			return "send " + id
		}
	case x.upstream == upstreamWebhooks:
		var event struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(x.Body, &event)
		return "deliver " + event.ID
	}
	return x.upstream + " " + x.Path // confirm, capture, cancel, release: the ID is in the path
}

var outboxIDParam = regexp.MustCompile(`outbox_id=([A-Za-z0-9_\-]+)`)

// callbackOutboxID is the outbox row a Twilio status callback URL names
// ("" if none): how a message at Twilio is traced to its row.
func callbackOutboxID(callback string) string {
	if m := outboxIDParam.FindStringSubmatch(callback); m != nil {
		return m[1]
	}
	return ""
}

// outboxID is the outbox row a Twilio send belongs to (its status
// callback names it).
func (x exchange) outboxID() string {
	form, _ := url.ParseQuery(string(x.Body))
	return callbackOutboxID(form.Get("StatusCallback"))
}

// reference is the booking reference a calendar or payment request names
// in its body ("" when it is in the path only).
func (x exchange) reference() string {
	op := x.operation()
	if strings.HasPrefix(op, "hold ") || strings.HasPrefix(op, "authorise ") {
		return strings.Fields(op)[1]
	}
	return ""
}

// responseID is the "id" (or Twilio "sid") of the upstream's answer.
func (x exchange) responseID() string {
	var body struct {
		ID  string `json:"id"`
		SID string `json:"sid"`
	}
	_ = json.Unmarshal(x.Response, &body)
	if body.ID != "" {
		return body.ID
	}
	return body.SID
}

// KeyReuse is the share of retries that carried their operation's key.
type KeyReuse struct {
	// Operations is how many distinct mutating operations were requested.
	Operations int `json:"operations"`
	// Retries are requests for an operation after its first request.
	Retries int `json:"retries"`
	// ReusedKey are retries with a key the operation had used before.
	ReusedKey int `json:"reused_key"`
	// NewKey are retries with another key: a workflow reset or a
	// reconciliation's "one more try" (guarded by the business reference).
	NewKey int `json:"new_key"`
	// NewKeyBy breaks NewKey down by kind of operation.
	NewKeyBy map[string]int `json:"new_key_by_operation,omitempty"`
	Share    float64        `json:"share"`
}

// kind is the operation without its reference or IDs, for breakdowns.
func (x exchange) kind() string {
	op := strings.Fields(x.operation())
	switch {
	case len(op) == 0:
		return ""
	case op[0] == "hold" || op[0] == "authorise" || op[0] == "refund" || op[0] == "send":
		return op[0]
	}
	return x.upstream + " " + idSegment.ReplaceAllString(x.Path, "{id}")
}

var idSegment = regexp.MustCompile(`/(hold|res|bk|pi|re|msg)_[A-Za-z0-9]+`)

// keyReuse measures key reuse on the calendar and payment APIs (Twilio's
// message API takes no key; the outbox never re-sends).
func keyReuse(all []exchange) KeyReuse {
	keys := map[string]map[string]bool{}
	var r KeyReuse
	for _, x := range all {
		if x.upstream == upstreamTwilio {
			continue
		}
		op := x.operation()
		if op == "" {
			continue
		}
		seen, ok := keys[op]
		if !ok {
			keys[op] = map[string]bool{x.IdempotencyKey: true}
			r.Operations++
			continue
		}
		r.Retries++
		if seen[x.IdempotencyKey] {
			r.ReusedKey++
		} else {
			r.NewKey++
			if r.NewKeyBy == nil {
				r.NewKeyBy = map[string]int{}
			}
			r.NewKeyBy[x.kind()]++
			seen[x.IdempotencyKey] = true
		}
	}
	r.Share = 1
	if r.Retries > 0 {
		r.Share = float64(r.ReusedKey) / float64(r.Retries)
	}
	return r
}

package twilio

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// list serves the Messages list: filters To, From, DateSent, DateSent<
// and DateSent> (Twilio's "DateSent<=" and "DateSent>=" on the wire),
// newest first, paged by PageSize with Page and PageToken.
func (f *FakeServer) list(w http.ResponseWriter, r *http.Request) {
	drop, ok := f.admit(w, r)
	if !ok {
		return
	}
	if drop {
		dropConnection(w)
		return
	}
	lq, err := parseListQuery(r.URL.Query())
	if err != nil {
		writeTwilioError(w, http.StatusBadRequest, 20001, err.Error())
		return
	}
	matched := f.matching(lq)
	start, err := lq.start(matched)
	if err != nil {
		writeTwilioError(w, http.StatusBadRequest, 20001, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, lq.pageOf(r.URL.Path, matched, start))
}

// dateFilter is one of the list's date filters: the query key and how a
// message's GMT send date (YYYY-MM-DD) compares to the filter's bound.
type dateFilter struct {
	key string
	cmp func(day, bound string) bool
}

// dateFilters are the list's date filters, in the order they are checked.
var dateFilters = []dateFilter{
	{"DateSent", func(d, b string) bool { return d == b }},
	{"DateSent<", func(d, b string) bool { return d <= b }},
	{"DateSent>", func(d, b string) bool { return d >= b }},
}

// badListQuery is the message of the 400 (Twilio code 20001) that
// answers a list request with a bad filter or paging value.
type badListQuery string

func (e badListQuery) Error() string { return string(e) }

// listQuery is a Messages list request, read and checked.
type listQuery struct {
	q        url.Values
	bounds   map[string]string // date filter key -> bound (YYYY-MM-DD)
	pageSize int
	page     int
}

// parseListQuery reads the date filters and paging of a list request.
func parseListQuery(q url.Values) (listQuery, error) {
	lq := listQuery{q: q, bounds: map[string]string{}, pageSize: 50}
	for _, df := range dateFilters {
		if v := q.Get(df.key); v != "" {
			day, err := twilioDate(v)
			if err != nil {
				return listQuery{}, badListQuery("Invalid " + df.key + " filter: " + v)
			}
			lq.bounds[df.key] = day
		}
	}
	if v := q.Get("PageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return listQuery{}, badListQuery("Invalid PageSize: " + v)
		}
		lq.pageSize = min(n, 1000)
	}
	if v := q.Get("Page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return listQuery{}, badListQuery("Invalid Page: " + v)
		}
		lq.page = n
	}
	return lq, nil
}

// matching returns the messages the query's filters select, newest first.
func (f *FakeServer) matching(lq listQuery) []FakeMessage {
	f.mu.Lock()
	var matched []FakeMessage
	for i := len(f.msgs) - 1; i >= 0; i-- { // newest first
		if m := f.msgs[i]; lq.selects(m) {
			matched = append(matched, m)
		}
	}
	f.mu.Unlock()
	sort.SliceStable(matched, func(i, j int) bool { return matched[i].DateCreated.After(matched[j].DateCreated) })
	return matched
}

// selects reports whether m passes the query's To, From and date filters.
func (lq listQuery) selects(m FakeMessage) bool {
	if v := lq.q.Get("To"); v != "" && m.To != v {
		return false
	}
	if v := lq.q.Get("From"); v != "" && m.From != v {
		return false
	}
	for _, df := range dateFilters {
		if b, ok := lq.bounds[df.key]; ok {
			// Twilio filters by the GMT date a message was sent; one
			// not sent yet has no date_sent and matches no filter.
			if m.DateSent.IsZero() || !df.cmp(m.DateSent.UTC().Format(time.DateOnly), b) {
				return false
			}
		}
	}
	return true
}

// start is the index in matched of the page's first message: Page times
// PageSize, or where a PageToken points, at most len(matched).
func (lq listQuery) start(matched []FakeMessage) (int, error) {
	start := lq.page * lq.pageSize
	if tok := lq.q.Get("PageToken"); tok != "" {
		// PA<sid>: the page after that message; PB<sid>: the page before.
		dir, sid := tok[:min(2, len(tok))], tok[min(2, len(tok)):]
		idx := -1
		for i, m := range matched {
			if m.Sid == sid {
				idx = i
				break
			}
		}
		switch {
		case dir == "PA" && idx >= 0:
			start = idx + 1
		case dir == "PB" && idx >= 0:
			start = max(idx-lq.pageSize, 0)
		case dir == "PA" || dir == "PB":
			start = len(matched)
		default:
			return 0, badListQuery("Invalid PageToken: " + tok)
		}
	}
	return min(start, len(matched)), nil
}

// pageOf is the list answer for the page of matched that begins at start,
// with Twilio's page URIs under path.
func (lq listQuery) pageOf(path string, matched []FakeMessage, start int) wireList {
	end := min(start+lq.pageSize, len(matched))
	items := matched[start:end]
	resp := wireList{
		FirstPageURI: lq.pageURI(path, 0, ""),
		URI:          lq.pageURI(path, lq.page, lq.q.Get("PageToken")),
		Page:         lq.page,
		PageSize:     lq.pageSize,
		Start:        start,
		End:          max(start+len(items)-1, start),
		Messages:     make([]wireMessage, 0, len(items)),
	}
	for _, m := range items {
		resp.Messages = append(resp.Messages, wireMessageOf(m))
	}
	if end < len(matched) && len(items) > 0 {
		next := lq.pageURI(path, lq.page+1, "PA"+items[len(items)-1].Sid)
		resp.NextPageURI = &next
	}
	if lq.page > 0 && len(items) > 0 {
		prev := lq.pageURI(path, lq.page-1, "PB"+items[0].Sid)
		resp.PreviousPageURI = &prev
	}
	return resp
}

// pageURI is the URI of page p (with an optional PageToken) under path,
// carrying the query's filters and page size.
func (lq listQuery) pageURI(path string, p int, token string) string {
	v := url.Values{}
	for _, k := range []string{"To", "From", "DateSent", "DateSent<", "DateSent>"} {
		if s := lq.q.Get(k); s != "" {
			v.Set(k, s)
		}
	}
	v.Set("PageSize", strconv.Itoa(lq.pageSize))
	v.Set("Page", strconv.Itoa(p))
	if token != "" {
		v.Set("PageToken", token)
	}
	return path + "?" + v.Encode()
}

// twilioDate reads a date filter value: YYYY-MM-DD as documented, or a
// full RFC 3339 time as twilio-go sends it; Twilio compares dates (GMT),
// so the time of day does not narrow the result.
func twilioDate(v string) (string, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t.Format(time.DateOnly), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return "", err
	}
	return t.UTC().Format(time.DateOnly), nil
}

package stripeapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/bookonce/bookonce/payments"
)

// listPage is Stripe's list envelope; searchPage its search envelope.
type listPage struct {
	Object  string          `json:"object"`
	Data    []*intentObject `json:"data"`
	HasMore bool            `json:"has_more"`
	URL     string          `json:"url"`
}

type searchPage struct {
	Object   string          `json:"object"`
	Data     []*intentObject `json:"data"`
	HasMore  bool            `json:"has_more"`
	NextPage *string         `json:"next_page"`
	URL      string          `json:"url"`
}

var listSpec = formSpec{scalars: []string{"limit", "starting_after", "customer"}, lists: []string{"expand"}}

// listIntents is GET /v1/payment_intents: newest first, paged by
// starting_after (the cursor stripe-go's iterator sends).
func (s *Server) listIntents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, apiErr := readQuery(r, listSpec)
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	limit, expand, apiErr := pageParams(f)
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	tenant := tenantOf(r)
	sql := `SELECT ` + intentColumns + ` FROM payment_intents WHERE tenant_id = $1`
	args := []any{tenant}
	if after, ok := f.str("starting_after"); ok {
		var seq int64
		err := s.Pool.QueryRow(ctx, `SELECT seq FROM payment_intents WHERE tenant_id = $1 AND id = $2`, tenant, after).Scan(&seq)
		if err != nil {
			writeError(ctx, w, noSuchIntent(http.StatusBadRequest, "starting_after", after))
			return
		}
		args = append(args, seq)
		sql += ` AND seq < $2`
	}
	if c, ok := f.str("customer"); ok {
		args = append(args, c)
		sql += ` AND customer = $` + strconv.Itoa(len(args))
	}
	args = append(args, limit+1)
	sql += ` ORDER BY seq DESC LIMIT $` + strconv.Itoa(len(args))
	rows, err := collectIntents(s.Pool.Query(ctx, sql, args...))
	if err != nil {
		s.internalError(w, r, "list payment intents", err)
		return
	}
	page := listPage{Object: "list", URL: "/v1/payment_intents", Data: []*intentObject{}}
	if len(rows) > limit {
		rows, page.HasMore = rows[:limit], true
	}
	for _, row := range rows {
		page.Data = append(page.Data, row.object(expand))
	}
	writeJSON(w, http.StatusOK, page)
}

var searchSpec = formSpec{scalars: []string{"query", "limit", "page"}, lists: []string{"expand"}}

// searchIntents is GET /v1/payment_intents/search with a subset of
// Stripe's search query language (see parseSearch). Stripe's search index
// lags writes by up to a minute (longer in incidents); this reads the
// table, so by default it is consistent, and callers must not rely on
// that against real Stripe. With Server.SearchLag set it leaves out the
// intents created within the lag (their later changes do not lag).
func (s *Server) searchIntents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, apiErr := readQuery(r, searchSpec)
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	limit, expand, apiErr := pageParams(f)
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	q, ok := f.str("query")
	if !ok {
		writeError(ctx, w, missingParam("query"))
		return
	}
	clauses, apiErr := parseSearch(q)
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	var before int64
	if p, ok := f.str("page"); ok {
		if before, ok = parseCursor(p); !ok {
			writeError(ctx, w, invalidRequest("page", "", "Invalid page token: "+p))
			return
		}
	}
	rows, seqs, err := s.search(ctx, tenantOf(r), clauses, before, limit+1)
	if err != nil {
		s.internalError(w, r, "search payment intents", err)
		return
	}
	page := searchPage{Object: "search_result", URL: "/v1/payment_intents/search", Data: []*intentObject{}}
	if len(rows) > limit {
		rows, page.HasMore = rows[:limit], true
		next := cursor(seqs[limit-1])
		page.NextPage = &next
	}
	for _, row := range rows {
		page.Data = append(page.Data, row.object(expand))
	}
	writeJSON(w, http.StatusOK, page)
}

// pageParams reads limit (1-100, default 10, Stripe's bounds) and whether
// data.latest_charge is expanded.
func pageParams(f form) (int, bool, *apiError) {
	limit, sent, apiErr := f.integer("limit", 1, 100)
	if apiErr != nil {
		apiErr.Code = payments.CodeParameterInvalidInt // limit is no amount
		return 0, false, apiErr
	}
	if !sent {
		limit = 10
	}
	expand, apiErr := f.expand("data.latest_charge")
	if apiErr != nil {
		return 0, false, apiErr
	}
	return int(limit), expand["data.latest_charge"], nil
}

// search runs the clauses as one parameterised query; field names come
// from a fixed list, values are always bind parameters. Intents created
// within SearchLag are left out.
func (s *Server) search(ctx context.Context, tenant string, clauses []searchClause, before int64, limit int) ([]intentRow, []int64, error) {
	sql := `SELECT seq, ` + intentColumns + ` FROM payment_intents WHERE tenant_id = $1`
	args := []any{tenant}
	for _, c := range clauses {
		args = append(args, c.value)
		n := "$" + strconv.Itoa(len(args))
		switch {
		case c.field == "metadata" && c.key == payments.MetadataReference:
			sql += ` AND booking_reference = ` + n // the indexed generated column
		case c.field == "metadata":
			args = append(args, c.key)
			sql += ` AND metadata ->> $` + strconv.Itoa(len(args)) + ` = ` + n
		case c.field == "amount":
			sql += ` AND amount = ` + n + `::bigint`
		case c.field == "created":
			sql += ` AND created_at > to_timestamp(` + n + `::bigint)`
		default:
			sql += ` AND coalesce(` + searchColumns[c.field] + `, '') = ` + n
		}
	}
	if s.SearchLag > 0 {
		// Not yet indexed; in the query, so that limit and paging count
		// only what is found.
		args = append(args, s.now().Add(-s.SearchLag))
		sql += ` AND created_at <= $` + strconv.Itoa(len(args))
	}
	if before > 0 {
		args = append(args, before)
		sql += ` AND seq < $` + strconv.Itoa(len(args))
	}
	args = append(args, limit)
	sql += ` ORDER BY seq DESC LIMIT $` + strconv.Itoa(len(args))
	rows, err := s.Pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out []intentRow
	var seqs []int64
	for rows.Next() {
		var seq int64
		var r intentRow
		if err := rows.Scan(append([]any{&seq}, intentScanTargets(&r)...)...); err != nil {
			return nil, nil, err
		}
		out, seqs = append(out, r), append(seqs, seq)
	}
	return out, seqs, rows.Err()
}

// searchColumns are the plain fields a query may name.
var searchColumns = map[string]string{"status": "status", "currency": "currency", "customer": "customer"}

// searchClause is one field:'value' term.
type searchClause struct{ field, key, value string }

// parseSearch parses the subset of Stripe's search query language this API
// supports: terms joined by AND, each one of
//
//	status:'requires_capture'   currency:'eur'   customer:'cus_123'
//	amount:500                  metadata['booking_reference']:'wf-1'
//	created>1767225600          (Unix seconds: created after)
//
// with values in single or double quotes (backslash escapes a quote).
// Anything else (OR, negation, ~ or range operators) is rejected rather
// than half understood.
func parseSearch(q string) ([]searchClause, *apiError) {
	bad := func(msg string) *apiError { return invalidRequest("query", "", "Invalid search query: "+msg) }
	var out []searchClause
	rest := strings.TrimSpace(q)
	for {
		var c searchClause
		var err error
		if c, rest, err = parseTerm(rest); err != nil {
			return nil, bad(err.Error())
		}
		out = append(out, c)
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			return out, nil
		}
		if !strings.HasPrefix(rest, "AND ") {
			return nil, bad("terms must be joined by AND (OR and other operators are not supported)")
		}
		rest = strings.TrimLeft(rest[len("AND "):], " ")
		if len(out) == 10 {
			return nil, bad("at most 10 terms")
		}
	}
}

// parseTerm reads field:value from the front of s.
func parseTerm(s string) (searchClause, string, error) {
	var c searchClause
	switch {
	case strings.HasPrefix(s, "metadata["):
		key, rest, err := quoted(s[len("metadata["):])
		if err != nil || !strings.HasPrefix(rest, "]") {
			return c, "", errors.New("write metadata['key']:'value'")
		}
		c.field, c.key, s = "metadata", key, rest[1:]
	case strings.HasPrefix(s, "created>"):
		c.field = "created"
		v, rest, err := integer(s[len("created>"):], "created must be compared to Unix seconds: created>1767225600")
		c.value = v
		return c, rest, err
	default:
		i := strings.IndexByte(s, ':')
		if i <= 0 {
			return c, "", errors.New("expected field:'value'")
		}
		c.field, s = s[:i], s[i:]
		if _, ok := searchColumns[c.field]; !ok && c.field != "amount" {
			return c, "", errors.New("unsupported field " + strconv.Quote(c.field))
		}
	}
	if !strings.HasPrefix(s, ":") {
		return c, "", errors.New("only exact match (:) is supported")
	}
	s = s[1:]
	if c.field == "amount" {
		v, rest, err := integer(s, "amount must be an integer")
		c.value = v
		return c, rest, err
	}
	v, rest, err := quoted(s)
	if err != nil {
		return c, "", err
	}
	c.value = v
	return c, rest, nil
}

// integer reads an unquoted integer from the front of s; problem is the
// error when there is none.
func integer(s, problem string) (string, string, error) {
	end := strings.IndexByte(s, ' ')
	if end < 0 {
		end = len(s)
	}
	if _, err := strconv.ParseInt(s[:end], 10, 64); err != nil {
		return "", "", errors.New(problem)
	}
	return s[:end], s[end:], nil
}

// quoted reads a '...' or "..." string with backslash escapes.
func quoted(s string) (string, string, error) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", "", errors.New("values must be quoted")
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case s[i] == q:
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", errors.New("unterminated quote")
}

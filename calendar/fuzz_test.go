package calendar

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzDecodeHoldRequest feeds arbitrary bodies to the hold request parser
// and validator: they must never panic, and whatever they accept must be a
// complete request on a whole minute.
func FuzzDecodeHoldRequest(f *testing.F) {
	f.Add(`{"service":"tire-change","start":"2026-12-01T14:00:00+01:00","customer":"+4915112345678","reference":"r"}`)
	f.Add(`{"resource_id":"bay-1","service":"x","start":"2026-12-01T14:00:00Z","customer":"c","reference":"r"}`)
	f.Add(`{"service":"tire-change","start":"2026-12-01T14:00:00"}`)
	f.Add(`{"service":1}`)
	f.Add(`[]`)
	f.Add(`{"service":"a","start":"2026-12-01T14:00:00Z","customer":"c","reference":"r"} {}`)
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest(http.MethodPost, "/v1/holds", strings.NewReader(body))
		var req HoldRequest
		if p := decodeStrict(r, &req); p != nil {
			if p.Status != http.StatusBadRequest || p.Detail == "" {
				t.Fatalf("a rejection must be a 400 with a message, got %d %q", p.Status, p.Detail)
			}
			return
		}
		if p := validateHold(req); p != nil {
			if p.Status != http.StatusBadRequest || len(p.Errors) == 0 {
				t.Fatalf("an invalid request must name its fields, got %+v", p)
			}
			return
		}
		if req.Start.IsZero() || req.Start.Second() != 0 || req.Service == "" || req.Customer == "" || req.Reference == "" {
			t.Fatalf("accepted an incomplete request: %+v", req)
		}
	})
}

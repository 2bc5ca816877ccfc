package web

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// ProblemTypeBase prefixes every problem type; the last path segment is a
// stable machine-readable code such as "slot_unavailable".
const ProblemTypeBase = "https://bookonce.dev/problems/"

// Problem is an RFC 9457 problem document.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Code repeats the last segment of Type for clients that switch on it.
	Code string `json:"code"`
	// Errors lists field-level validation failures.
	Errors []FieldError `json:"errors,omitempty"`
	// Extra members (e.g. "alternatives") are merged into the document.
	Extra map[string]any `json:"-"`
}

// FieldError names one invalid field and why.
type FieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// NewProblem builds a problem with the given status, stable code and detail.
func NewProblem(status int, code, detail string) *Problem {
	return &Problem{Type: ProblemTypeBase + code, Title: http.StatusText(status), Status: status, Detail: detail, Code: code}
}

// Error makes a Problem usable as an error.
func (p *Problem) Error() string { return p.Code + ": " + p.Detail }

// MarshalJSON merges Extra into the document.
func (p *Problem) MarshalJSON() ([]byte, error) {
	type plain Problem
	b, err := json.Marshal((*plain)(p))
	if err != nil || len(p.Extra) == 0 {
		return b, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range p.Extra {
		if _, taken := m[k]; !taken {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// WriteProblem writes p as application/problem+json.
func WriteProblem(w http.ResponseWriter, p *Problem) {
	body, err := json.Marshal(p)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}

// WriteJSON writes v as JSON with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		WriteProblem(w, NewProblem(http.StatusInternalServerError, "internal", "encode response"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

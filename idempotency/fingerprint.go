package idempotency

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// bodyKind says how a body is canonicalised; it is part of the fingerprint
// so that the same bytes sent as JSON and as a form never collide.
type bodyKind string

const (
	kindJSON  bodyKind = "json"
	kindForm  bodyKind = "form"
	kindRaw   bodyKind = "raw"
	kindEmpty bodyKind = "empty"
)

// kindOf classifies a request by its Content-Type.
func kindOf(r *http.Request) bodyKind {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return kindRaw
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return kindJSON
	case mt == "application/x-www-form-urlencoded":
		return kindForm
	default:
		return kindRaw
	}
}

// fingerprintVersion separates this encoding from any future one, so a
// changed canonicalisation can never match a stored fingerprint by accident.
const fingerprintVersion = "bookonce-idempotency-fingerprint-v1"

// Fingerprint is the SHA-256 of the canonical request: method, operation
// (the route pattern), the path parameters named by the pattern's wildcards
// (r.PathValue, sorted by name), and the body canonicalised by its
// Content-Type: JSON (application/json, *+json) by CanonicalJSON;
// application/x-www-form-urlencoded decoded, keys sorted, each key's values
// in their order; anything else as raw bytes. An empty body (or a form
// without fields) is the same under every Content-Type.
//
// Every field is length-prefixed, so no two different requests encode to
// the same byte stream. It fails when a JSON or form body does not parse:
// such a request is rejected before a key is claimed.
func Fingerprint(r *http.Request, operation string, body []byte) ([32]byte, error) {
	h := sha256.New()
	field(h, fingerprintVersion)
	field(h, r.Method)
	field(h, operation)
	names := wildcards(operation)
	sort.Strings(names)
	for _, n := range names {
		field(h, n)
		field(h, r.PathValue(n))
	}
	kind := kindOf(r)
	var form url.Values
	if kind == kindForm {
		var err error
		if form, err = url.ParseQuery(string(body)); err != nil {
			return [32]byte{}, fmt.Errorf("invalid form body: %w", err)
		}
		if len(form) == 0 {
			kind = kindEmpty // "&" is the empty form
		}
	}
	if len(body) == 0 {
		// No body means the same whatever Content-Type a client sends
		// with it, so a retry that drops the header still matches.
		kind = kindEmpty
	}
	field(h, string(kind))
	switch kind {
	case kindJSON:
		c, err := CanonicalJSON(body)
		if err != nil {
			return [32]byte{}, err
		}
		field(h, string(c))
	case kindForm:
		canonicalForm(h, form)
	case kindRaw:
		field(h, string(body))
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

// canonicalForm hashes a parsed form: keys sorted, each key's values in
// the order sent (Stripe's expand[] and array parameters depend on it).
func canonicalForm(h hash.Hash, vals url.Values) {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	count(h, len(keys))
	for _, k := range keys {
		field(h, k)
		count(h, len(vals[k]))
		for _, v := range vals[k] {
			field(h, v)
		}
	}
}

// wildcards returns the wildcard names of a ServeMux pattern such as
// "POST /v1/holds/{id}/confirm" or "/files/{path...}"; {$} is no wildcard.
func wildcards(pattern string) []string {
	var names []string
	for {
		i := strings.IndexByte(pattern, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(pattern[i:], '}')
		if j < 0 {
			return names
		}
		name := strings.TrimSuffix(pattern[i+1:i+j], "...")
		if name != "$" && name != "" {
			names = append(names, name)
		}
		pattern = pattern[i+j+1:]
	}
}

func field(h hash.Hash, s string) {
	count(h, len(s))
	_, _ = h.Write([]byte(s))
}

func count(h hash.Hash, n int) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	_, _ = h.Write(b[:])
}

package idempotency_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
)

// FuzzCanonicalJSON: the canonical form is valid JSON, canonical itself,
// and means what the input meant; invalid JSON is never accepted.
func FuzzCanonicalJSON(f *testing.F) {
	f.Add([]byte(`{"customer":"anna","slot":{"start":"2026-12-01T14:00:00+01:00"},"n":[1,1.0,-0]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := idempotency.CanonicalJSON(in)
		if err != nil {
			if json.Valid(in) {
				// Valid for encoding/json, refused on purpose.
				require.True(t, errors.Is(err, idempotency.ErrDuplicateKey) || errors.Is(err, idempotency.ErrInvalidUTF8) ||
					errors.Is(err, idempotency.ErrTooDeep) || errors.Is(err, idempotency.ErrNumberRange),
					"valid JSON %q rejected: %v", in, err)
			}
			return
		}
		require.True(t, json.Valid(in), "accepted invalid JSON %q", in)
		require.True(t, json.Valid(c), "canonical form %q is not JSON", c)
		require.True(t, utf8.Valid(c))
		again, err := idempotency.CanonicalJSON(c)
		require.NoError(t, err)
		require.Equal(t, string(c), string(again), "not idempotent")
		require.True(t, sameJSON(decode(t, in), decode(t, c)), "%q and %q differ in meaning", in, c)
	})
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

// sameJSON compares decoded documents, numbers as exact decimals.
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, sameJSON)
	case json.Number:
		b, ok := b.(json.Number)
		return ok && sameNumber(string(a), string(b))
	default:
		return a == b
	}
}

// sameNumber compares exactly with big.Rat; an exponent too large to
// expand cheaply only has to be a number on both sides.
func sameNumber(a, b string) bool {
	if hugeExponent(a) || hugeExponent(b) {
		return true
	}
	x, okx := new(big.Rat).SetString(a)
	y, oky := new(big.Rat).SetString(b)
	return okx && oky && x.Cmp(y) == 0
}

func hugeExponent(n string) bool {
	i := strings.IndexAny(n, "eE")
	return i >= 0 && len(strings.TrimLeft(strings.TrimLeft(n[i+1:], "+-"), "0")) > 3
}

// FuzzFingerprintForm: a form's fingerprint ignores key order and
// encoding, keeps the order of one key's values, and fails exactly when
// the form does not parse.
func FuzzFingerprintForm(f *testing.F) {
	f.Add("amount=100&currency=eur&expand[]=a&expand[]=b")
	f.Fuzz(func(t *testing.T, body string) {
		const op = "POST /v1/payment_intents/{intent}/confirm"
		fp := func(b string) ([32]byte, error) {
			r := httptest.NewRequest("POST", "/", nil)
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.SetPathValue("intent", "pi_1")
			return idempotency.Fingerprint(r, op, []byte(b))
		}
		got, err := fp(body)
		vals, perr := url.ParseQuery(body)
		require.Equal(t, perr == nil, err == nil, "%q: fingerprint %v, parse %v", body, err, perr)
		if err != nil {
			return
		}
		// Re-encoded with keys reversed and every byte escaped differently.
		keys := make([]string, 0, len(vals))
		for k := range vals {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Reverse(keys)
		var parts []string
		for _, k := range keys {
			for _, v := range vals[k] {
				parts = append(parts, escapeAll(k)+"="+url.QueryEscape(v))
			}
		}
		reenc, err := fp(strings.Join(parts, "&"))
		require.NoError(t, err)
		require.Equal(t, got, reenc, "%q vs %q", body, strings.Join(parts, "&"))
		std, err := fp(vals.Encode())
		require.NoError(t, err)
		require.Equal(t, got, std)
		// Swapping two different values of one key is another request.
		for _, k := range keys {
			vs := vals[k]
			if i := slices.IndexFunc(vs, func(v string) bool { return v != vs[0] }); i > 0 {
				swapped := url.Values{}
				for kk, vv := range vals {
					swapped[kk] = slices.Clone(vv)
				}
				swapped[k][0], swapped[k][i] = swapped[k][i], swapped[k][0]
				other, err := fp(swapped.Encode())
				require.NoError(t, err)
				require.NotEqual(t, got, other, "value order of %q ignored", k)
				break
			}
		}
	})
}

// escapeAll percent-encodes every byte in lower-case hex, an encoding no
// client uses but every form parser must accept.
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString("%" + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
	}
	return b.String()
}

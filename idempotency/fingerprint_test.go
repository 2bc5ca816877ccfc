package idempotency_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
)

func TestCanonicalJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b":1,"a":[true,false,null]}`, `{"a":[true,false,null],"b":1}`},
		{" {\n\t\"a\" : { \"d\":1, \"c\":2 } }\r\n", `{"a":{"c":2,"d":1}}`},
		{`[1, 1.0, 1e0, 10e-1, 1.00E+0, 0.1e1]`, `[1,1,1,1,1,1]`},
		{`[0, -0, 0.0, 0e5, -0.0e-3]`, `[0,0,0,0,0]`},
		{`[100, 1e2, 1.5, 0.15e1, -12.50]`, `[100,100,1.5e0,1.5e0,-1.25e1]`},
		{`[0.1, 0.10000000000000001]`, `[1e-1,1.0000000000000001e-1]`},
		{`[123456789012345678901, 1234567890123456789012]`, `[123456789012345678901,1.234567890123456789012e21]`},
		{`["\u0041\/\"\\\n\u001f\u00e9", "é", "\ud83d\ude00"]`, "[\"A/\\\"\\\\\\n\\u001fé\",\"é\",\"😀\"]"},
		{`{"\u0062":1,"a":2}`, `{"a":2,"b":1}`},
		{`"x"`, `"x"`},
		{`{}`, `{}`},
		{`[]`, `[]`},
	} {
		got, err := idempotency.CanonicalJSON([]byte(tc.in))
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, string(got), tc.in)
	}
	for _, in := range []string{
		``, ` `, `{`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `+1`, `1e`, `tru`, `nul`, `"a`, `{"a" 1}`,
		`{"a":1}x`, `{"a":1}{}`, "\"\x01\"", `"\x"`, `"\u12"`, `NaN`, `Infinity`,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":1}`, `"\ud800"`, `"\udc00\ud800"`, "\"\xff\"",
		`1e1000000000000000`, strings.Repeat("[", 600) + strings.Repeat("]", 600),
	} {
		_, err := idempotency.CanonicalJSON([]byte(in))
		require.Error(t, err, "%q must be rejected", in)
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(method, ctype, op string, path map[string]string, body string) [32]byte {
		t.Helper()
		r := httptest.NewRequest(method, "/", nil)
		if ctype != "" {
			r.Header.Set("Content-Type", ctype)
		}
		for k, v := range path {
			r.SetPathValue(k, v)
		}
		sum, err := idempotency.Fingerprint(r, op, []byte(body))
		require.NoError(t, err)
		return sum
	}
	const js, form = "application/json", "application/x-www-form-urlencoded"
	base := fp("POST", js, opCreate, nil, `{"a":1,"b":[1,2]}`)

	same := map[string][32]byte{
		"reordered, spaced":     fp("POST", js, opCreate, nil, ` { "b" : [1, 2.0], "a": 1e0 } `),
		"charset parameter":     fp("POST", js+"; charset=utf-8", opCreate, nil, `{"b":[1,2],"a":1}`),
		"problem+json is JSON":  fp("POST", "application/merge-patch+json", opCreate, nil, `{"a":1,"b":[1,2]}`),
		"unused path parameter": fp("POST", js, opCreate, map[string]string{"id": "x"}, `{"a":1,"b":[1,2]}`),
	}
	for name, got := range same {
		require.Equal(t, base, got, name)
	}
	differ := map[string][32]byte{
		"value":          fp("POST", js, opCreate, nil, `{"a":2,"b":[1,2]}`),
		"array order":    fp("POST", js, opCreate, nil, `{"a":1,"b":[2,1]}`),
		"method":         fp("PUT", js, opCreate, nil, `{"a":1,"b":[1,2]}`),
		"operation":      fp("POST", js, opOther, nil, `{"a":1,"b":[1,2]}`),
		"raw, not JSON":  fp("POST", "text/plain", opCreate, nil, `{"a":1,"b":[1,2]}`),
		"string, not 1":  fp("POST", js, opCreate, nil, `{"a":"1","b":[1,2]}`),
		"precise amount": fp("POST", js, opCreate, nil, `{"a":1.0000000000000001,"b":[1,2]}`),
	}
	for name, got := range differ {
		require.NotEqual(t, base, got, name)
	}

	t.Run("path parameters", func(t *testing.T) {
		a := fp("POST", js, opConfirm, map[string]string{"id": "h-1"}, `{}`)
		require.Equal(t, a, fp("POST", js, opConfirm, map[string]string{"id": "h-1"}, `{ }`))
		require.NotEqual(t, a, fp("POST", js, opConfirm, map[string]string{"id": "h-2"}, `{}`))
	})

	t.Run("forms", func(t *testing.T) {
		a := fp("POST", form, "POST /v1/charges", nil, "amount=100&currency=eur&expand[]=a&expand[]=b")
		require.Equal(t, a, fp("POST", form, "POST /v1/charges", nil, "expand%5B%5D=a&currency=eur&expand[]=b&amount=100"))
		require.NotEqual(t, a, fp("POST", form, "POST /v1/charges", nil, "amount=100&currency=eur&expand[]=b&expand[]=a"),
			"values of one key keep their order")
		require.NotEqual(t, a, fp("POST", form, "POST /v1/charges", nil, "amount=100&currency=eur&expand[]=a"))
		require.Equal(t, fp("POST", form, "POST /v1/x", nil, "a=b+c"), fp("POST", form, "POST /v1/x", nil, "a=b%20c"))
	})

	t.Run("empty bodies are equal", func(t *testing.T) {
		e := fp("POST", "", opCreate, nil, "")
		require.Equal(t, e, fp("POST", js, opCreate, nil, ""))
		require.Equal(t, e, fp("POST", form, opCreate, nil, ""))
		require.Equal(t, e, fp("POST", form, opCreate, nil, "&"))
	})

	t.Run("unparsable bodies fail", func(t *testing.T) {
		for ctype, body := range map[string]string{js: `{"a":`, form: "a=%zz", form + " ": "a=1;b=2"} {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			r.Header.Set("Content-Type", strings.TrimSpace(ctype))
			_, err := idempotency.Fingerprint(r, opCreate, []byte(body))
			require.Error(t, err, body)
		}
	})
}

package stripeapi

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Stripe's metadata limits; enforced so a request that real Stripe would
// reject is rejected here too.
const (
	maxMetadataKeys     = 50
	maxMetadataKeyLen   = 40
	maxMetadataValueLen = 500
	// maxFormFields bounds the work one request can cause.
	maxFormFields = 256
)

// formField is one decoded key=value pair with the key split into Stripe's
// bracket path: "metadata[booking_reference]" is {"metadata",
// "booking_reference"}, "expand[0]" is {"expand", "0"}, "expand[]" is
// {"expand", ""}.
type formField struct {
	raw   string // the key as sent, for error messages (param)
	path  []string
	value string
}

// parseFormFields decodes an application/x-www-form-urlencoded body (or a
// query string) and splits every key into its bracket path. It keeps the
// order of the pairs, which decides the order of list values, and never
// panics on any input (FuzzParseForm).
func parseFormFields(raw string) ([]formField, *apiError) {
	var out []formField
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		if len(out) == maxFormFields {
			return nil, invalidRequest("", "", "too many parameters (more than "+strconv.Itoa(maxFormFields)+")")
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return nil, invalidRequest("", "", "the request body is not valid form encoding: "+err.Error())
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, invalidRequest(key, "", "the value of "+key+" is not valid form encoding: "+err.Error())
		}
		if !utf8.ValidString(key) || !utf8.ValidString(val) {
			return nil, invalidRequest("", "", "parameters must be valid UTF-8")
		}
		path, ok := splitKey(key)
		if !ok {
			return nil, invalidRequest(key, "", "invalid parameter name "+strconv.Quote(key)+": use name, name[key] or name[]")
		}
		out = append(out, formField{raw: key, path: path, value: val})
	}
	return out, nil
}

// splitKey splits "a[b][c]" into {"a", "b", "c"}. The name must be
// non-empty and every bracket closed; text between or after brackets is
// malformed.
func splitKey(key string) ([]string, bool) {
	name, _, _ := strings.Cut(key, "[")
	if name == "" || strings.ContainsAny(name, "]") {
		return nil, false
	}
	path := []string{name}
	for rest := key[len(name):]; rest != ""; {
		if rest[0] != '[' {
			return nil, false
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return nil, false
		}
		seg := rest[1:end]
		if strings.ContainsAny(seg, "[") {
			return nil, false
		}
		path = append(path, seg)
		rest = rest[end+1:]
	}
	return path, true
}

// formSpec names the parameters one endpoint accepts, by shape. Anything
// else is parameter_unknown: a client typo must never be silently ignored
// on a route that moves money.
type formSpec struct {
	scalars []string // name=value
	maps    []string // name[key]=value (metadata)
	lists   []string // name[]=v or name[0]=v (expand)
	// objects and arrays take nested brackets of any depth
	// (payment_intent_data[metadata][k], line_items[0][price_data][currency]);
	// the handler names the accepted paths (see form.nested). An array's
	// first segment must be an index.
	objects []string
	arrays  []string
}

// form is a request bound to its formSpec.
type form struct {
	scalars map[string]string
	maps    map[string]map[string]string
	lists   map[string][]string
	// deep holds objects and arrays by their full key, e.g.
	// "line_items[0][quantity]".
	deep map[string]string
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// bindForm checks fields against spec and groups them.
func bindForm(fields []formField, spec formSpec) (form, *apiError) {
	f := form{scalars: map[string]string{}, maps: map[string]map[string]string{}, lists: map[string][]string{}, deep: map[string]string{}}
	for _, fl := range fields {
		name := fl.path[0]
		switch {
		case len(fl.path) == 1 && contains(spec.scalars, name):
			if _, dup := f.scalars[name]; dup {
				return form{}, invalidRequest(fl.raw, "", "received more than one value for "+name)
			}
			f.scalars[name] = fl.value
		case len(fl.path) == 1 && contains(spec.maps, name) && fl.value == "":
			// Stripe: metadata="" clears all keys; on a create, none are set.
			if f.maps[name] == nil {
				f.maps[name] = map[string]string{}
			}
		case len(fl.path) == 2 && contains(spec.maps, name):
			if err := addMapEntry(f.maps, fl); err != nil {
				return form{}, err
			}
		case len(fl.path) == 2 && contains(spec.lists, name):
			if fl.path[1] != "" {
				if _, err := strconv.ParseUint(fl.path[1], 10, 16); err != nil {
					return form{}, unknownParam(fl.raw)
				}
			}
			f.lists[name] = append(f.lists[name], fl.value)
		case len(fl.path) >= 2 && (contains(spec.objects, name) || contains(spec.arrays, name)):
			if err := addDeep(f.deep, fl, contains(spec.arrays, name)); err != nil {
				return form{}, err
			}
		default:
			return form{}, unknownParam(fl.raw)
		}
	}
	return f, nil
}

func addMapEntry(maps map[string]map[string]string, fl formField) *apiError {
	name, k := fl.path[0], fl.path[1]
	m := maps[name]
	if m == nil {
		m = map[string]string{}
		maps[name] = m
	}
	switch {
	case k == "":
		return invalidRequest(fl.raw, "", name+" keys must not be empty")
	case len(k) > maxMetadataKeyLen:
		return invalidRequest(fl.raw, "", name+" keys can be at most "+strconv.Itoa(maxMetadataKeyLen)+" characters long")
	case len(fl.value) > maxMetadataValueLen:
		return invalidRequest(fl.raw, "", name+" values can be at most "+strconv.Itoa(maxMetadataValueLen)+" characters long")
	}
	if _, dup := m[k]; dup {
		return invalidRequest(fl.raw, "", "received more than one value for "+fl.raw)
	}
	if fl.value == "" {
		// Stripe treats an empty value as "unset this key".
		return nil
	}
	if len(m) == maxMetadataKeys {
		return invalidRequest(name, "", name+" can have at most "+strconv.Itoa(maxMetadataKeys)+" keys")
	}
	m[k] = fl.value
	return nil
}

// addDeep records one nested field under its canonical key. Empty
// segments are refused: "line_items[][quantity]" names no item.
func addDeep(deep map[string]string, fl formField, array bool) *apiError {
	for _, seg := range fl.path[1:] {
		if seg == "" {
			return unknownParam(fl.raw)
		}
	}
	if array {
		if _, err := strconv.ParseUint(fl.path[1], 10, 8); err != nil {
			return unknownParam(fl.raw)
		}
	}
	key := fl.path[0] + "[" + strings.Join(fl.path[1:], "][") + "]"
	if _, dup := deep[key]; dup {
		return invalidRequest(fl.raw, "", "received more than one value for "+fl.raw)
	}
	deep[key] = fl.value
	return nil
}

// parseRequestForm parses and binds in one step.
func parseRequestForm(raw string, spec formSpec) (form, *apiError) {
	fields, err := parseFormFields(raw)
	if err != nil {
		return form{}, err
	}
	return bindForm(fields, spec)
}

// str returns a scalar and whether it was sent.
func (f form) str(name string) (string, bool) {
	v, ok := f.scalars[name]
	return v, ok
}

// integer parses an optional integer parameter within [lo, hi]; the codes
// are Stripe's (parameter_invalid_integer, amount_too_large).
func (f form) integer(name string, lo, hi int64) (int64, bool, *apiError) {
	v, ok := f.scalars[name]
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil:
		return 0, true, &apiError{status: 400, Type: typeInvalidRequest, Code: "parameter_invalid_integer", Param: name,
			Message: "Invalid integer: " + v}
	case n < lo:
		return 0, true, &apiError{status: 400, Type: typeInvalidRequest, Code: "parameter_invalid_integer", Param: name,
			Message: "This value must be greater than or equal to " + strconv.FormatInt(lo, 10) + "."}
	case n > hi:
		return 0, true, &apiError{status: 400, Type: typeInvalidRequest, Code: "amount_too_large", Param: name,
			Message: "This value must be less than or equal to " + strconv.FormatInt(hi, 10) + "."}
	}
	return n, true, nil
}

// boolean parses an optional "true"/"false" parameter, the only spellings
// stripe-go sends.
func (f form) boolean(name string) (bool, bool, *apiError) {
	v, ok := f.scalars[name]
	if !ok {
		return false, false, nil
	}
	switch v {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, true, invalidRequest(name, "", "Invalid boolean: "+v)
}

// oneOf checks an optional enumerated parameter.
func (f form) oneOf(name string, allowed ...string) (string, *apiError) {
	v, ok := f.scalars[name]
	if !ok {
		return "", nil
	}
	if !contains(allowed, v) {
		return "", invalidRequest(name, "", "Invalid "+name+": must be one of "+strings.Join(allowed, ", "))
	}
	return v, nil
}

// expand validates expand[] against what an endpoint can expand. Stripe
// expands many more properties; a subset rejects the rest loudly instead of
// answering with an unexpanded ID the client did not ask for.
func (f form) expand(allowed ...string) (map[string]bool, *apiError) {
	out := map[string]bool{}
	for _, e := range f.lists["expand"] {
		if !contains(allowed, e) {
			return nil, invalidRequest("expand", "", "This property cannot be expanded ("+e+").")
		}
		out[e] = true
	}
	return out, nil
}

package stripeapi

// ParseForm exposes the form parser to FuzzParseForm with the create
// route's parameters.
func ParseForm(raw string) (scalars, metadata map[string]string, expand []string, err error) {
	f, apiErr := parseRequestForm(raw, createIntentSpec)
	if apiErr != nil {
		return nil, nil, nil, apiErr
	}
	return f.scalars, f.maps["metadata"], f.lists["expand"], nil
}

// ParseSearch exposes the search query parser to FuzzParseForm.
func ParseSearch(q string) error {
	if _, apiErr := parseSearch(q); apiErr != nil {
		return apiErr
	}
	return nil
}

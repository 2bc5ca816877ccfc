package channels

import (
	"net/http"
	"strconv"
	"strings"
)

// paidTexts are the page the hosted payment page sends the customer back
// to (the Checkout Session's success_url), by language.
var paidTexts = map[string]struct{ title, body string }{
	"de": {"Danke!", "Danke, Ihre Anzahlung ist eingegangen – die Bestätigung kommt per Nachricht."},
	"en": {"Thank you!", "Thank you, your deposit has been received – the confirmation will follow by message."},
}

// paidPage is a static "thank you" page. It shows nothing of the session
// (its ID in the query is a capability) and decides nothing: the
// confirmation follows from the provider's webhook, never from this visit.
func paidPage(w http.ResponseWriter, r *http.Request) {
	lang := acceptLanguage(r.Header.Get("Accept-Language"))
	t := paidTexts[lang]
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Language", lang)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer") // the URL carries the session ID
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	page := `<!doctype html><html lang="` + lang + `"><head><meta charset="utf-8">` +
		`<meta name="viewport" content="width=device-width, initial-scale=1"><title>` + t.title + `</title>` +
		`<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}</style>` +
		`</head><body><h1>` + t.title + `</h1><p id="paid">` + t.body + `</p></body></html>`
	_, _ = w.Write([]byte(page)) // a static page; a broken connection has nobody to tell
}

// acceptLanguage picks German or English from an Accept-Language header by
// quality (German, the shops' language, when neither is asked for).
func acceptLanguage(header string) string {
	best, bestQ := "de", -1.0
	for _, part := range strings.Split(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if primary != "de" && primary != "en" {
			continue
		}
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if q > bestQ {
			best, bestQ = primary, q
		}
	}
	return best
}

package channels

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// Reasons a signed delivery is recorded but handed to no conversation
// (bookonce_webhooks_unroutable_total{channel,reason}).
const (
	// ReasonWithheld: the caller ID is withheld or no phone number at all
	// (anonymous, unknown, +266696687, empty, client:…, sip:…).
	ReasonWithheld = "withheld"
	// ReasonInvalidNumber: From is neither a phone number the library
	// knows nor well-formed E.164.
	ReasonInvalidNumber = "invalid_number"
	// ReasonMissingID: the delivery has no MessageSid or CallSid (or no
	// step of a spoken answer): it is recorded under a digest of its form.
	ReasonMissingID = "missing_id"
	// ReasonUnconfiguredNumber: To is a number no tenant owns
	// (tenants.yaml twilio_numbers); the caller is answered that the
	// number is not configured.
	ReasonUnconfiguredNumber = "unconfigured_number"
)

// Repairs made to a delivery that is handed on all the same
// (bookonce_webhooks_repaired_total{channel,reason}).
const (
	// RepairRawNumber: the phone library could not normalise the number
	// (its metadata lags new ranges); the E.164 Twilio sent is kept.
	RepairRawNumber = "raw_number"
	// RepairSanitised: text PostgreSQL cannot store as is (NUL, invalid
	// UTF-8) was replaced by U+FFFD.
	RepairSanitised = "sanitised"
)

// withheldIDs are the caller IDs carriers and Twilio send for a caller
// whose number is withheld or unknown (compared in lower case).
var withheldIDs = map[string]bool{
	"": true, "anonymous": true, "unknown": true, "restricted": true, "private": true,
	"unavailable": true, "blocked": true, "withheld": true,
	"+266696687": true, "266696687": true, "+86282452253": true, "+8656696": true,
	"+7378742833": true, "+2562533": true,
}

// e164 is a well-formed E.164 number, as Twilio sends phone numbers.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// caller is who sent a delivery, as far as it can be known.
type caller struct {
	// Number is the customer's E.164 number; "" when unidentifiable.
	Number string
	// Raw: Number is kept as Twilio sent it (the library calls it invalid).
	Raw bool
	// Reason says why Number is "" (ReasonWithheld, ReasonInvalidNumber).
	Reason string
}

// identify turns a From ("whatsapp:+4915…", "+4915…", "anonymous",
// "client:alice") or a WaId into the customer's number. A number the
// phone library rejects is kept when it is well-formed E.164: Twilio
// already normalised it, and refusing it would lose a real customer.
func identify(raw, region string) caller {
	raw = strings.TrimSpace(strings.TrimPrefix(raw, "whatsapp:"))
	if withheldIDs[strings.ToLower(raw)] || strings.Contains(raw, ":") {
		// client:…, sip:… and other URIs name no phone to write to.
		return caller{Reason: ReasonWithheld}
	}
	if raw[0] != '+' && isDigits(raw) && len(raw) > 10 {
		raw = "+" + raw // a WaId is the number without the plus
	}
	if num, err := phonenumbers.Parse(raw, region); err == nil && phonenumbers.IsValidNumber(num) {
		return caller{Number: phonenumbers.Format(num, phonenumbers.E164)}
	}
	if e164.MatchString(raw) {
		return caller{Number: raw, Raw: true}
	}
	return caller{Reason: ReasonInvalidNumber}
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// sanitise makes s storable in PostgreSQL text and jsonb: invalid UTF-8
// and NUL become U+FFFD, everything else is kept. changed reports a
// replacement.
func sanitise(s string) (clean string, changed bool) {
	clean = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	return clean, clean != s
}

// maxEventID bounds an inbox key: it is a primary key, and PostgreSQL
// refuses index entries beyond about 2.7 kB. Twilio's SIDs have 34
// characters.
const maxEventID = 200

// eventKey returns the inbox key of a delivery with id (MessageSid,
// CallSid, …): the id sanitised, or a digest of it when it is too long.
func eventKey(id string) string {
	clean, _ := sanitise(id)
	if len(clean) <= maxEventID {
		return clean
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// formKey is the inbox key of a delivery without an ID: a digest of the
// route and its whole signed form, so Twilio's redelivery of it is still
// recognised.
func formKey(route string, form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	h.Write([]byte(route))
	for _, k := range keys {
		for _, v := range form[k] {
			h.Write([]byte{0})
			h.Write([]byte(k))
			h.Write([]byte{0})
			h.Write([]byte(v))
		}
	}
	return "form:" + hex.EncodeToString(h.Sum(nil))
}

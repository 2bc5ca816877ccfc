package tenants

import (
	"time"
)

// Language is a language bookonce speaks with customers.
type Language string

// Supported languages. The order of Languages is the order synonyms of
// other languages follow the tenant's own in a catalogue.
const (
	German  Language = "de"
	English Language = "en"
)

// Languages are all supported languages.
var Languages = []Language{German, English}

func supported(l Language) bool {
	for _, s := range Languages {
		if s == l {
			return true
		}
	}
	return false
}

// File is a parsed and normalised tenants.yaml: the complete desired
// configuration. Tenants are sorted by ID.
type File struct {
	Tenants []Tenant
	// pos maps a field path ("tenants[1].services[0].deposit.currency") to
	// its line in the source, so validation can point at it. Empty for a
	// File built in code.
	pos map[string]int
	// name is the source's name for messages ("tenants.yaml").
	name string
}

// Tenant is one tenant's configuration as it appears in the file and in
// the database.
type Tenant struct {
	ID   string
	Name string
	// TokenHashes are lower-case hex SHA-256 digests of the API tokens,
	// sorted; plain tokens never appear in the file or the database.
	TokenHashes []string
	// Numbers are the tenant's Twilio numbers in E.164 without a
	// "whatsapp:" prefix, sorted: calls and messages to them belong to it.
	Numbers []string
	// Senders are the numbers its messages leave from, per channel
	// (senders.go); empty: the first of Numbers.
	Senders Senders
	// Timezone is the IANA name of the business time zone.
	Timezone string
	// Language is what customers are answered in.
	Language Language
	// Resources are sorted by ID.
	Resources []Resource
	// Services keep the file's order: it is the catalogue order, which
	// breaks ties between equally long synonyms in intent recognition.
	Services []Service
	Policies Policies
	// Templates override the built-in message texts per language.
	Templates map[Language]map[TemplateName]string
	// WhatsApp are the approved WhatsApp templates per language and
	// message (whatsapp.go); nil: none, every message is sent as text.
	WhatsApp map[Language]map[TemplateName]WhatsAppTemplate
}

// Resource is a bay, a technician or anything else a booking occupies.
type Resource struct {
	ID   string
	Name string
	// Kind is "bay" or "technician".
	Kind string
	// Hours are the opening hours per ISO weekday (1 = Monday ... 7 =
	// Sunday); a weekday without an entry is closed.
	Hours map[int]Interval
	// ClosedDays are dates (YYYY-MM-DD, sorted) the resource is closed
	// although its weekday is open: holidays, company holidays.
	ClosedDays []string
	// Calendar is the shop's own calendar the resource's bookings are
	// written to (shopcalendar.go); nil: none.
	Calendar *ShopCalendar
}

// Interval is an opening interval of one day, as "HH:MM" local times.
type Interval struct {
	Opens, Closes string
}

// Service is something a tenant offers.
type Service struct {
	ID   string
	Name string
	// Synonyms are what customers call it, per language; the first of a
	// language is its display label in that language.
	Synonyms map[Language][]string
	Duration time.Duration
	// Resources are the IDs of the resources that can do it, sorted.
	Resources []string
	Deposit   Money
}

// Money is an amount in minor units (cents) of a lower-case ISO 4217
// currency, as the payment API takes it.
type Money struct {
	Amount   int64
	Currency string
}

// Policies are a tenant's rules of business. Zero durations mean "not set":
// the process's configured default (HOLD_TTL, DEDUP_WINDOW) applies, and
// there are no cancellation window, reminders or quiet hours.
type Policies struct {
	HoldTTL     time.Duration
	DedupWindow time.Duration
	// CancellationWindow is how long before the slot a customer may still
	// cancel on their own.
	CancellationWindow time.Duration
	// Reminders are offsets before the slot at which a reminder is sent,
	// sorted longest first.
	Reminders []time.Duration
	// QuietHours is when no message is sent; nil for none.
	QuietHours *Interval
	// OptOutKeywords and OptInKeywords are the messages that stop and
	// restart reminders (upper case); nil: consent.DefaultStop and
	// consent.DefaultStart.
	OptOutKeywords, OptInKeywords []string
	// CallerLinks is where a caller's payment link goes: "whatsapp" (""
	// too: a link cannot be spoken, and most mobiles have WhatsApp; one
	// without gets it by SMS after all) or "sms" (a shop whose callers
	// are mostly on landlines or prefer text messages).
	CallerLinks string
}

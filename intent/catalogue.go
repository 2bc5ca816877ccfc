package intent

import "time"

// Service is one thing a tenant offers.
type Service struct {
	// ID is the stable catalogue key that goes into the canonical intent.
	ID string
	// Names are synonyms in German and English ("reifenwechsel", "tire
	// change"); matching folds case and umlauts, so either spelling works.
	Names []string
	// DurationMinutes is how long the slot must be free.
	DurationMinutes int
	// Labels are display names per language ("de", "en") used in questions;
	// when a language is missing, Names[0] (then ID) is shown.
	Labels map[string]string
}

// Label returns the service's display name in lang.
func (s Service) Label(lang string) string {
	if l := s.Labels[lang]; l != "" {
		return l
	}
	if len(s.Names) > 0 {
		return s.Names[0]
	}
	return s.ID
}

// Catalogue is what a tenant offers (services with synonyms) and when.
type Catalogue struct {
	// Tenant scopes every intent (principle 2: keys are scoped by tenant).
	Tenant   string
	Services []Service
	// Resources are optional named resources ("Bühne 1"); a customer who
	// names one gets it in Result.Resource.
	Resources []string
	// Opens and Closes are the local opening hours as "HH:MM" in the
	// location passed to Validate. They have no default on purpose: a
	// tenant without hours must not accept bookings at midnight.
	Opens, Closes string
	// Weekdays are the days the workshop is open.
	Weekdays []time.Weekday
}

// Service returns the service with the given ID.
func (c Catalogue) Service(id string) (Service, bool) {
	for _, s := range c.Services {
		if s.ID == id {
			return s, true
		}
	}
	return Service{}, false
}

// Demo service IDs.
const (
	ServiceTireChange = "tire-change"
	ServiceInspection = "inspection"
	ServiceOilChange  = "oil-change"
)

// DemoCatalogue returns the demo tenant's catalogue: tire-change (30),
// inspection (90), oil-change (45) with German and English synonyms, open
// Monday to Saturday 08:00-18:00.
func DemoCatalogue() Catalogue {
	return Catalogue{
		Tenant: "demo",
		Services: []Service{
			{
				ID:              ServiceTireChange,
				DurationMinutes: 30,
				Labels:          map[string]string{"de": "Reifenwechsel", "en": "tire change"},
				Names: []string{
					"Reifenwechsel", "Reifen wechseln", "Reifen wechsel", "Reifen gewechselt",
					"Reifen tauschen", "Reifen umstecken", "Reifen montieren", "Reifen umziehen",
					"Räderwechsel", "Räder wechseln", "Räder tauschen", "Radwechsel", "Rad wechseln",
					"Reifentausch", "Reifenservice", "Reifen", "Winterreifen", "Sommerreifen",
					"Allwetterreifen", "Ganzjahresreifen",
					"tire change", "tyre change", "tire swap", "tyre swap", "wheel change",
					"change tires", "change tyres", "change wheels", "swap tires", "swap tyres",
					"tire service", "tyre service", "winter tires", "summer tires", "tire", "tyre",
				},
			},
			{
				ID:              ServiceInspection,
				DurationMinutes: 90,
				Labels:          map[string]string{"de": "Inspektion", "en": "inspection"},
				Names: []string{
					"Inspektion", "Jahresinspektion", "Durchsicht", "Wartung", "Service",
					"Kundendienst", "inspection", "annual service", "maintenance", "check-up",
					"checkup", "service",
				},
			},
			{
				ID:              ServiceOilChange,
				DurationMinutes: 45,
				Labels:          map[string]string{"de": "Ölwechsel", "en": "oil change"},
				Names: []string{
					"Ölwechsel", "Öl wechseln", "Öl wechsel", "Öl tauschen", "Ölservice",
					"Motoröl", "Öl", "oil change", "oil service", "change oil", "change the oil",
					"oil",
				},
			},
		},
		Opens:    "08:00",
		Closes:   "18:00",
		Weekdays: []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday},
	}
}

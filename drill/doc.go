// Package drill is bookonce's acceptance drill ("Null Duplikate"): it
// drives many bookings through the whole stack as Twilio would (signed
// voice and WhatsApp webhooks, redeliveries, double taps, rephrasings,
// genuine second bookings), injects faults in front of the calendar,
// payment and Twilio APIs with the chaos proxy, SIGKILLs worker processes
// while activities are in flight, waits for everything to settle, and then
// measures from what reached the downstream systems (calendar and payment
// rows, messages at the fake Twilio) the pilot metrics of the seeds:
// duplicate effects, key reuse, unknown outcomes, review cases, false
// merges, stored result IDs and lost requests.
//
// `make chaos` runs it through cmd/chaos; a 100-booking run is a test.
package drill

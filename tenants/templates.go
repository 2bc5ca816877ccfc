package tenants

import (
	"fmt"
	"strings"
	"text/template"
)

// TemplateName names a message bookonce sends or says. A tenant may
// override any of them per language; the rest fall back to the built-in
// defaults below.
type TemplateName string

// The messages. The German defaults are the texts bookonce used before
// tenants were configurable, word for word, so a tenant without templates
// is answered exactly as before.
const (
	// Conversation replies (workflows/conversation).
	TemplateNotUnderstood     TemplateName = "not_understood"
	TemplateCancelAskBooking  TemplateName = "cancel_ask_booking" // runs recorded before cancellations were handled
	TemplateUnclear           TemplateName = "unclear"
	TemplateMissingDetails    TemplateName = "missing_details"
	TemplateSlotNotPossible   TemplateName = "slot_not_possible"
	TemplateCheckFailed       TemplateName = "check_failed"
	TemplateInProgress        TemplateName = "in_progress"
	TemplateBeingCancelled    TemplateName = "being_cancelled"
	TemplateSimilarRequest    TemplateName = "similar_request"
	TemplateBookingStarted    TemplateName = "booking_started"
	TemplateStartFailedRetry  TemplateName = "start_failed_retry"
	TemplateStartFailedReview TemplateName = "start_failed_review"
	TemplateRequestsMerged    TemplateName = "requests_merged"
	TemplateSecondNotBooked   TemplateName = "second_not_booked"
	// Cancellation replies (workflows/conversation/cancel.go).
	TemplateCancelLookupFailed   TemplateName = "cancel_lookup_failed"
	TemplateCancelNone           TemplateName = "cancel_none"
	TemplateCancelSeveral        TemplateName = "cancel_several"
	TemplateCancelConfirmed      TemplateName = "cancel_confirmed"
	TemplateCancelUnknown        TemplateName = "cancel_unknown"
	TemplateCancelEndedMeanwhile TemplateName = "cancel_ended_meanwhile"
	TemplateCancelInFlight       TemplateName = "cancel_in_flight"
	TemplateCancelNotRecorded    TemplateName = "cancel_not_recorded"
	// Changes of a confirmed booking asked for in the conversation
	// (workflows/conversation_change*.go).
	TemplateCancelWhich           TemplateName = "cancel_which"
	TemplateCancelAlready         TemplateName = "cancel_already"
	TemplateCancelConfirmKept     TemplateName = "cancel_confirm_kept"
	TemplateCancelNotPossible     TemplateName = "cancel_not_possible"
	TemplateChangePending         TemplateName = "change_pending"
	TemplateChangeReview          TemplateName = "change_review"
	TemplateChangeNotRecorded     TemplateName = "change_not_recorded"
	TemplateRescheduleWhich       TemplateName = "reschedule_which"
	TemplateRescheduleInFlight    TemplateName = "reschedule_in_flight"
	TemplateRescheduleNone        TemplateName = "reschedule_none"
	TemplateRescheduleSame        TemplateName = "reschedule_same"
	TemplateRescheduleNotPossible TemplateName = "reschedule_not_possible"
	// Appointment messages (workflows/appointment: steps.go, already_booked.go,
	// alternatives.go).
	TemplateConfirmation  TemplateName = "confirmation"
	TemplateAlreadyBooked TemplateName = "already_booked"
	TemplateAlreadyHeld   TemplateName = "already_held"
	TemplateAlternatives  TemplateName = "alternatives"
	TemplateNotBooked     TemplateName = "not_booked"
	TemplateInReview      TemplateName = "in_review"
	// Booking lifecycle messages (workflows/booking_cancel.go).
	TemplateBookingCancelled         TemplateName = "booking_cancelled"
	TemplateBookingCancelledRefunded TemplateName = "booking_cancelled_refunded"
	TemplateBookingCancelledKept     TemplateName = "booking_cancelled_kept"
	// TemplateBookingRescheduled tells the customer the booking's new
	// time after a reschedule (.When is the new slot, .Amount the deposit
	// that carries over, empty without one).
	TemplateBookingRescheduled TemplateName = "booking_rescheduled"
	// TemplateReminderEarly is a reminder a day or more ahead: it says how
	// to cancel or move; TemplateReminder is a later one.
	TemplateReminderEarly TemplateName = "reminder_early"
	TemplateReminder      TemplateName = "reminder"
	// TemplateOptedOut acknowledges a STOP (once: a second STOP while
	// opted out is not answered); TemplateOptedIn a START;
	// TemplateConsentNotRecorded says a keyword could not be stored.
	TemplateOptedOut           TemplateName = "opted_out"
	TemplateOptedIn            TemplateName = "opted_in"
	TemplateConsentNotRecorded TemplateName = "consent_not_recorded"
	// Payment-link messages (workflows/deposit/link.go, workflows/appointment/deadlines.go).
	TemplatePaymentLink         TemplateName = "payment_link"
	TemplatePaymentExpired      TemplateName = "payment_expired"
	TemplatePaymentRefundedLate TemplateName = "payment_refunded_late"
	TemplatePaymentUnavailable  TemplateName = "payment_unavailable"
	// Spoken on calls (channels/webhooks.go).
	TemplateVoiceGreeting TemplateName = "voice_greeting"
	// TemplateVoiceGatherNext is no longer said (a spoken wish is answered
	// with TemplateVoiceOneMoment); kept so tenant files naming it apply.
	TemplateVoiceGatherNext    TemplateName = "voice_gather_next"
	TemplateVoiceUnknownNumber TemplateName = "voice_unknown_number"
	TemplateVoiceUnassigned    TemplateName = "voice_unassigned"
	// Spoken while a caller waits for the booking (channels/voice_status.go):
	// the wait, the outcome when it arrives during the call, and the
	// promise of the written confirmation when it does not.
	TemplateVoiceOneMoment      TemplateName = "voice_one_moment"
	TemplateVoiceConfirmed      TemplateName = "voice_confirmed"
	TemplateVoiceAlreadyBooked  TemplateName = "voice_already_booked"
	TemplateVoiceNotBooked      TemplateName = "voice_not_booked"
	TemplateVoiceInReview       TemplateName = "voice_in_review"
	TemplateVoiceConfirmFollows TemplateName = "voice_confirmation_follows"
	TemplateVoicePaymentLink    TemplateName = "voice_payment_link"
)

// MessageData is what a template may use.
type MessageData struct {
	// Service is the service's label in the message's language.
	Service string
	// When is the slot's local time as the customer reads it.
	When string
	// Booking and Hold are the calendar's booking and reservation IDs.
	Booking, Hold string
	// Alternatives are free slots offered instead, formatted like When.
	Alternatives []string
	// Amount is the deposit as the language writes money ("20,00 €").
	Amount string
	// Link is the payment link and Until its deadline's local time.
	Link, Until string
}

// funcs are the functions templates may call besides the built-ins.
var funcs = template.FuncMap{"join": strings.Join}

// defaults are the built-in texts per language.
var defaults = map[Language]map[TemplateName]string{
	German: {
		TemplateNotUnderstood:     "Entschuldigung, das habe ich nicht verstanden. Welchen Termin möchten Sie?",
		TemplateCancelAskBooking:  "Verstanden. Bitte nennen Sie uns die Buchung, die wir stornieren sollen; ein Mitarbeiter meldet sich.",
		TemplateUnclear:           "Welchen Termin und welche Leistung möchten Sie?",
		TemplateMissingDetails:    "Für welche Leistung und wann möchten Sie einen Termin?",
		TemplateSlotNotPossible:   "Dieser Termin ist leider nicht möglich. Welcher andere passt Ihnen?",
		TemplateCheckFailed:       "Wir konnten Ihren Wunsch gerade nicht prüfen; ein Mitarbeiter meldet sich.",
		TemplateInProgress:        "Ihr Termin ({{.Service}}, {{.When}}) ist bereits in Bearbeitung.",
		TemplateBeingCancelled:    "Ihr Termin ({{.Service}}, {{.When}}) wird gerade storniert; möchten Sie ihn doch wahrnehmen, schreiben Sie uns bitte noch einmal, sobald die Stornierung bestätigt ist, dann buchen wir ihn neu.",
		TemplateSimilarRequest:    "Sie haben kurz zuvor einen ähnlichen Termin angefragt. Wir prüfen, ob Sie beide möchten, und melden uns.",
		TemplateBookingStarted:    "Danke! Wir buchen {{.Service}} am {{.When}}; die Bestätigung folgt.",
		TemplateStartFailedRetry:  "Wir konnten Ihre Buchung gerade nicht starten. Bitte schreiben Sie uns in ein paar Minuten noch einmal.",
		TemplateStartFailedReview: "Wir konnten Ihre Buchung gerade nicht starten; ein Mitarbeiter kümmert sich darum und meldet sich.",
		TemplateRequestsMerged:    "Wir haben Ihre Anfragen zusammengeführt; es bleibt bei einem Termin.",
		TemplateSecondNotBooked:   "Wir haben Ihre zweite Anfrage nicht gebucht. Melden Sie sich gern, wenn Sie doch einen weiteren Termin möchten.",

		TemplateCancelLookupFailed:    "Wir konnten Ihre Buchungen gerade nicht prüfen. Ein Mitarbeiter hat Ihren Stornierungswunsch erhalten und meldet sich bei Ihnen.",
		TemplateCancelNone:            "Wir haben unter Ihrer Nummer keine offene Buchung gefunden. Ein Mitarbeiter prüft Ihren Stornierungswunsch und meldet sich bei Ihnen.",
		TemplateCancelSeveral:         "Sie haben mehrere Buchungen bei uns. Ein Mitarbeiter hat Ihren Stornierungswunsch erhalten und klärt mit Ihnen, welche storniert werden soll.",
		TemplateCancelConfirmed:       "Ihr Termin ({{.Service}} am {{.When}}) ist bereits bestätigt. Ein Mitarbeiter hat Ihren Stornierungswunsch erhalten und meldet sich bei Ihnen.",
		TemplateCancelUnknown:         "Wir können den Stand Ihrer Buchung gerade nicht sicher feststellen. Ein Mitarbeiter hat Ihren Stornierungswunsch erhalten und meldet sich bei Ihnen.",
		TemplateCancelEndedMeanwhile:  "Ihre Buchung ({{.Service}} am {{.When}}) war schon abgeschlossen, als Ihre Stornierung ankam. Ein Mitarbeiter hat Ihren Wunsch erhalten und meldet sich bei Ihnen.",
		TemplateCancelInFlight:        "Verstanden: Wir stornieren Ihre noch nicht bestätigte Buchung ({{.Service}} am {{.When}}).",
		TemplateCancelNotRecorded:     "Ihr Stornierungswunsch konnte gerade nicht erfasst werden. Bitte schreiben Sie uns in einigen Minuten noch einmal.",
		TemplateCancelWhich:           "Sie haben mehrere Termine bei uns: {{join .Alternatives \"; \"}}. Welchen möchten Sie absagen? Nennen Sie bitte den Tag, zum Beispiel „Dienstag absagen“.",
		TemplateCancelAlready:         "Ihr Termin ({{.Service}} am {{.When}}) ist bereits storniert.",
		TemplateCancelConfirmKept:     "Ihr Termin ({{.Service}} am {{.When}}) ist so bald, dass die Anzahlung von {{.Amount}} bei einer Absage nicht erstattet wird. Möchten Sie trotzdem absagen? Dann antworten Sie bitte mit „Ja“.",
		TemplateCancelNotPossible:     "Ihr Termin ({{.Service}} am {{.When}}) hat bereits begonnen oder ist vorbei und kann nicht mehr storniert werden.",
		TemplateChangePending:         "Ihr Änderungswunsch ({{.Service}} am {{.When}}) ist angekommen und wird gerade ausgeführt. Haben Sie in einigen Minuten keine Bestätigung, schreiben Sie uns bitte noch einmal.",
		TemplateChangeReview:          "Ihr Termin ({{.Service}} am {{.When}}) konnte gerade nicht geändert werden. Ein Mitarbeiter hat Ihren Wunsch erhalten und meldet sich bei Ihnen.",
		TemplateChangeNotRecorded:     "Ihr Änderungswunsch konnte gerade nicht erfasst werden. Bitte schreiben Sie uns in einigen Minuten noch einmal.",
		TemplateRescheduleWhich:       "Sie haben mehrere Termine bei uns: {{join .Alternatives \"; \"}}. Welchen möchten Sie verschieben? Nennen Sie bitte die Leistung und den neuen Termin.",
		TemplateRescheduleInFlight:    "Ihre Buchung ({{.Service}} am {{.When}}) ist noch nicht bestätigt. Bitte melden Sie sich nach der Bestätigung noch einmal, dann verschieben wir sie.",
		TemplateRescheduleNone:        "Wir haben unter Ihrer Nummer keinen bestätigten Termin gefunden, den wir verschieben könnten. Möchten Sie einen neuen Termin buchen?",
		TemplateRescheduleSame:        "Ihr Termin ({{.Service}}) ist bereits am {{.When}}.",
		TemplateRescheduleNotPossible: "Ihr Termin ({{.Service}} am {{.When}}) kann nicht mehr verschoben werden.",

		TemplateConfirmation:  "Ihr Termin ist bestätigt: {{.Service}} am {{.When}} (Buchung {{.Booking}}).",
		TemplateNotBooked:     "Leider konnten wir {{.Service}} am {{.When}} nicht buchen. Es wird nichts berechnet; eine schon gezahlte Anzahlung erstatten wir vollständig. Schreiben Sie uns gern einen anderen Wunschtermin.",
		TemplateInReview:      "Bei Ihrer Buchung ({{.Service}} am {{.When}}) ist etwas offen geblieben. Ein Mitarbeiter prüft sie und meldet sich bei Ihnen.",
		TemplateAlreadyBooked: "Sie haben für diese Zeit bereits einen Termin: {{.Service}} am {{.When}} (Buchung {{or .Booking .Hold \"unbekannt\"}}). Wir haben keinen zweiten gebucht und nichts berechnet.",
		TemplateAlreadyHeld:   "Für diese Zeit ist bereits ein Termin für Sie in Bearbeitung: {{.Service}} am {{.When}} (Reservierung {{.Hold}}). Wir haben keinen zweiten gebucht und nichts berechnet.",
		TemplateAlternatives:  "Ihr Wunschtermin ({{.Service}}, {{.When}}) ist leider schon vergeben.{{if .Alternatives}} Frei wären: {{join .Alternatives \", \"}}. Welcher passt Ihnen?{{else}} Welcher andere Termin passt Ihnen?{{end}}",

		TemplateBookingCancelled:         "Ihr Termin ({{.Service}} am {{.When}}, Buchung {{.Booking}}) ist storniert.",
		TemplateBookingCancelledRefunded: "Ihr Termin ({{.Service}} am {{.When}}, Buchung {{.Booking}}) ist storniert. Ihre Anzahlung von {{.Amount}} erstatten wir vollständig.",
		TemplateBookingCancelledKept:     "Ihr Termin ({{.Service}} am {{.When}}, Buchung {{.Booking}}) ist storniert. Da die Stornierung kurzfristig kam, behalten wir die Anzahlung von {{.Amount}} ein.",
		TemplateBookingRescheduled:       "Ihr Termin ist verschoben: {{.Service}} jetzt am {{.When}} (Buchung {{.Booking}}).{{if .Amount}} Ihre Anzahlung von {{.Amount}} gilt für den neuen Termin.{{end}}",
		TemplateReminderEarly:            "Erinnerung an Ihren Termin: {{.Service}} am {{.When}} (Buchung {{.Booking}}). Wenn Sie absagen oder verschieben möchten, antworten Sie einfach auf diese Nachricht.",
		TemplateReminder:                 "Erinnerung: Ihr Termin {{.Service}} ist am {{.When}} (Buchung {{.Booking}}). Wir freuen uns auf Sie.",
		TemplateOptedOut:                 "Sie erhalten von uns keine Erinnerungen mehr. Antworten auf Ihre Nachrichten und Bestätigungen Ihrer Buchungen senden wir weiter. Mit START melden Sie sich wieder an.",
		TemplateOptedIn:                  "Sie erhalten wieder Erinnerungen an Ihre Termine. Mit STOP melden Sie sich ab.",
		TemplateConsentNotRecorded:       "Ihr Wunsch konnte gerade nicht gespeichert werden. Bitte schreiben Sie in einigen Minuten noch einmal.",

		TemplatePaymentLink:         "Bitte zahlen Sie die Anzahlung von {{.Amount}} hier: {{.Link}} (gültig bis {{.Until}}).",
		TemplatePaymentExpired:      "Ihr Zahlungslink ist abgelaufen, deshalb haben wir den Termin ({{.Service}}, {{.When}}) wieder freigegeben. Schreiben Sie uns gern noch einmal, dann senden wir Ihnen einen neuen Link.",
		TemplatePaymentRefundedLate: "Ihre Zahlung von {{.Amount}} kam an, nachdem Ihre Buchung bereits beendet war. Wir haben nichts eingezogen: Der Betrag wird freigegeben bzw. erstattet.",
		TemplatePaymentUnavailable:  "Die Anzahlung für Ihren Termin ({{.Service}}, {{.When}}) konnte gerade nicht eingerichtet werden, deshalb ist der Termin nicht gebucht und nichts berechnet. Bitte schreiben Sie uns in einigen Minuten noch einmal.",

		TemplateVoiceGreeting:       "Willkommen! Welchen Termin möchten Sie buchen?",
		TemplateVoiceGatherNext:     "Danke, wir prüfen Ihren Wunsch und schicken Ihnen eine SMS. Möchten Sie noch etwas sagen?",
		TemplateVoiceUnknownNumber:  "Leider können wir Ihre Rufnummer nicht erkennen und deshalb am Telefon keinen Termin für Sie buchen. Bitte schreiben Sie uns eine WhatsApp-Nachricht an diese Nummer, dann buchen wir Ihren Termin dort. Auf Wiederhören.",
		TemplateVoiceUnassigned:     "Leider konnten wir Ihren Anruf nicht zuordnen. Bitte schreiben Sie uns eine WhatsApp-Nachricht an diese Nummer, dann buchen wir Ihren Termin dort. Auf Wiederhören.",
		TemplateVoiceOneMoment:      "Einen Moment bitte, wir kümmern uns um Ihr Anliegen.",
		TemplateVoiceConfirmed:      "Ihr Termin ist bestätigt: {{.Service}} am {{.When}}.{{if .Amount}} Die Anzahlung von {{.Amount}} ist bezahlt.{{end}} Die Bestätigung bekommen Sie auch per SMS. Möchten Sie noch etwas sagen?",
		TemplateVoiceAlreadyBooked:  "Sie haben diesen Termin bereits: {{.Service}} am {{.When}}. Es wurde nichts berechnet. Möchten Sie noch etwas sagen?",
		TemplateVoiceNotBooked:      "Leider konnten wir {{.Service}} am {{.When}} nicht buchen; es wurde nichts berechnet. Welcher andere Termin passt Ihnen?",
		TemplateVoiceInReview:       "Ihre Buchung wird noch von einem Mitarbeiter geprüft; wir melden uns per SMS. Möchten Sie noch etwas sagen?",
		TemplateVoiceConfirmFollows: "Ihre Buchung läuft noch. Sie erhalten die Bestätigung per SMS. Möchten Sie noch etwas sagen?",
		TemplateVoicePaymentLink:    "Für {{.Service}} am {{.When}} schicken wir Ihnen einen Link für die Anzahlung{{if .Amount}} von {{.Amount}}{{end}} per WhatsApp oder SMS. Sobald sie bezahlt ist, ist Ihr Termin bestätigt. Möchten Sie noch etwas sagen?",
	},
	English: {
		TemplateNotUnderstood:     "Sorry, I did not understand that. Which appointment would you like?",
		TemplateCancelAskBooking:  "Understood. Please tell us which booking to cancel; a member of staff will get back to you.",
		TemplateUnclear:           "Which appointment and which service would you like?",
		TemplateMissingDetails:    "Which service would you like, and when?",
		TemplateSlotNotPossible:   "Unfortunately this time is not possible. Which other time suits you?",
		TemplateCheckFailed:       "We could not check your request just now; a member of staff will get back to you.",
		TemplateInProgress:        "Your appointment ({{.Service}}, {{.When}}) is already being booked.",
		TemplateBeingCancelled:    "Your appointment ({{.Service}}, {{.When}}) is being cancelled. If you want it after all, please write to us again once the cancellation is confirmed and we will book it anew.",
		TemplateSimilarRequest:    "You asked for a similar appointment shortly before. We are checking whether you want both and will get back to you.",
		TemplateBookingStarted:    "Thank you! We are booking {{.Service}} on {{.When}}; the confirmation follows.",
		TemplateStartFailedRetry:  "We could not start your booking just now. Please write to us again in a few minutes.",
		TemplateStartFailedReview: "We could not start your booking just now; a member of staff is taking care of it and will get back to you.",
		TemplateRequestsMerged:    "We merged your requests; it remains one appointment.",
		TemplateSecondNotBooked:   "We did not book your second request. Just get in touch if you do want another appointment.",

		TemplateCancelLookupFailed:    "We could not check your bookings just now. A member of staff has received your cancellation request and will get back to you.",
		TemplateCancelNone:            "We found no open booking under your number. A member of staff is checking your cancellation request and will get back to you.",
		TemplateCancelSeveral:         "You have several bookings with us. A member of staff has received your cancellation request and will clarify with you which one to cancel.",
		TemplateCancelConfirmed:       "Your appointment ({{.Service}} on {{.When}}) is already confirmed. A member of staff has received your cancellation request and will get back to you.",
		TemplateCancelUnknown:         "We cannot reliably determine the state of your booking just now. A member of staff has received your cancellation request and will get back to you.",
		TemplateCancelEndedMeanwhile:  "Your booking ({{.Service}} on {{.When}}) was already completed when your cancellation arrived. A member of staff has received your request and will get back to you.",
		TemplateCancelInFlight:        "Understood: we are cancelling your booking that is not confirmed yet ({{.Service}} on {{.When}}).",
		TemplateCancelNotRecorded:     "Your cancellation request could not be recorded just now. Please write to us again in a few minutes.",
		TemplateCancelWhich:           "You have several appointments with us: {{join .Alternatives \"; \"}}. Which one would you like to cancel? Please name the day, for example \"cancel Tuesday\".",
		TemplateCancelAlready:         "Your appointment ({{.Service}} on {{.When}}) is already cancelled.",
		TemplateCancelConfirmKept:     "Your appointment ({{.Service}} on {{.When}}) is so soon that the deposit of {{.Amount}} is not refunded if you cancel. Would you like to cancel anyway? Then please reply \"yes\".",
		TemplateCancelNotPossible:     "Your appointment ({{.Service}} on {{.When}}) has begun or is over and can no longer be cancelled.",
		TemplateChangePending:         "Your request to change your appointment ({{.Service}} on {{.When}}) has arrived and is being carried out. If you have no confirmation within a few minutes, please write to us again.",
		TemplateChangeReview:          "Your appointment ({{.Service}} on {{.When}}) could not be changed just now. A member of staff has received your request and will get back to you.",
		TemplateChangeNotRecorded:     "Your request to change your appointment could not be recorded just now. Please write to us again in a few minutes.",
		TemplateRescheduleWhich:       "You have several appointments with us: {{join .Alternatives \"; \"}}. Which one would you like to move? Please name the service and the new time.",
		TemplateRescheduleInFlight:    "Your booking ({{.Service}} on {{.When}}) is not confirmed yet. Please get back to us once it is, and we will move it.",
		TemplateRescheduleNone:        "We found no confirmed appointment under your number that we could move. Would you like to book a new one?",
		TemplateRescheduleSame:        "Your appointment ({{.Service}}) is already on {{.When}}.",
		TemplateRescheduleNotPossible: "Your appointment ({{.Service}} on {{.When}}) can no longer be moved.",

		TemplateConfirmation:  "Your appointment is confirmed: {{.Service}} on {{.When}} (booking {{.Booking}}).",
		TemplateNotBooked:     "Unfortunately we could not book {{.Service}} on {{.When}}. Nothing is charged; a deposit already paid is refunded in full. Feel free to send us another time.",
		TemplateInReview:      "Something about your booking ({{.Service}} on {{.When}}) is still open. A member of staff is checking it and will get back to you.",
		TemplateAlreadyBooked: "You already have an appointment at this time: {{.Service}} on {{.When}} (booking {{or .Booking .Hold \"unknown\"}}). We did not book a second one and charged nothing.",
		TemplateAlreadyHeld:   "An appointment for you at this time is already being booked: {{.Service}} on {{.When}} (reservation {{.Hold}}). We did not book a second one and charged nothing.",
		TemplateAlternatives:  "Unfortunately your preferred time ({{.Service}}, {{.When}}) is already taken.{{if .Alternatives}} Free would be: {{join .Alternatives \", \"}}. Which one suits you?{{else}} Which other time suits you?{{end}}",

		TemplateBookingCancelled:         "Your appointment ({{.Service}} on {{.When}}, booking {{.Booking}}) is cancelled.",
		TemplateBookingCancelledRefunded: "Your appointment ({{.Service}} on {{.When}}, booking {{.Booking}}) is cancelled. We are refunding your deposit of {{.Amount}} in full.",
		TemplateBookingCancelledKept:     "Your appointment ({{.Service}} on {{.When}}, booking {{.Booking}}) is cancelled. As the cancellation came at short notice, we keep the deposit of {{.Amount}}.",
		TemplateBookingRescheduled:       "Your appointment has been moved: {{.Service}} now on {{.When}} (booking {{.Booking}}).{{if .Amount}} Your deposit of {{.Amount}} carries over to the new time.{{end}}",
		TemplateReminderEarly:            "A reminder of your appointment: {{.Service}} on {{.When}} (booking {{.Booking}}). If you need to cancel or move it, just reply to this message.",
		TemplateReminder:                 "Reminder: your appointment {{.Service}} is on {{.When}} (booking {{.Booking}}). We look forward to seeing you.",
		TemplateOptedOut:                 "You will get no more reminders from us. We still answer your messages and confirm your bookings. Reply START to subscribe again.",
		TemplateOptedIn:                  "You will get reminders of your appointments again. Reply STOP to unsubscribe.",
		TemplateConsentNotRecorded:       "We could not save your request just now. Please write to us again in a few minutes.",

		TemplatePaymentLink:         "Please pay the deposit of {{.Amount}} here: {{.Link}} (valid until {{.Until}}).",
		TemplatePaymentExpired:      "Your payment link has expired, so we released the appointment ({{.Service}}, {{.When}}). Just write to us again and we will send you a new link.",
		TemplatePaymentRefundedLate: "Your payment of {{.Amount}} arrived after your booking had already ended. We charged nothing: the amount is released or refunded.",
		TemplatePaymentUnavailable:  "We could not set up the deposit for your appointment ({{.Service}}, {{.When}}) just now, so it is not booked and nothing was charged. Please write to us again in a few minutes.",

		TemplateVoiceGreeting:       "Welcome! Which appointment would you like to book?",
		TemplateVoiceGatherNext:     "Thank you, we are checking your request and will send you a text message. Would you like to add anything?",
		TemplateVoiceUnknownNumber:  "Unfortunately we cannot recognise your phone number and so cannot book an appointment for you by phone. Please send us a WhatsApp message to this number and we will book your appointment there. Goodbye.",
		TemplateVoiceUnassigned:     "Unfortunately we could not assign your call. Please send us a WhatsApp message to this number and we will book your appointment there. Goodbye.",
		TemplateVoiceOneMoment:      "One moment please, we are taking care of your request.",
		TemplateVoiceConfirmed:      "Your appointment is confirmed: {{.Service}} on {{.When}}.{{if .Amount}} The deposit of {{.Amount}} is paid.{{end}} You will also get the confirmation by text message. Would you like to add anything?",
		TemplateVoiceAlreadyBooked:  "You already have this appointment: {{.Service}} on {{.When}}. Nothing was charged. Would you like to add anything?",
		TemplateVoiceNotBooked:      "Unfortunately we could not book {{.Service}} on {{.When}}; nothing was charged. Which other time suits you?",
		TemplateVoiceInReview:       "A member of staff is still checking your booking; we will get back to you by text message. Would you like to add anything?",
		TemplateVoiceConfirmFollows: "Your booking is still in progress. You will get the confirmation by text message. Would you like to add anything?",
		TemplateVoicePaymentLink:    "For {{.Service}} on {{.When}} we are sending you a link to pay the deposit{{if .Amount}} of {{.Amount}}{{end}} by WhatsApp or text message. Once it is paid, your appointment is confirmed. Would you like to add anything?",
	},
}

// TemplateNames lists every template name, in the order above.
func TemplateNames() []TemplateName {
	return []TemplateName{
		TemplateNotUnderstood, TemplateCancelAskBooking, TemplateUnclear, TemplateMissingDetails, TemplateSlotNotPossible,
		TemplateCheckFailed, TemplateInProgress, TemplateBeingCancelled, TemplateSimilarRequest, TemplateBookingStarted, TemplateStartFailedRetry,
		TemplateStartFailedReview, TemplateRequestsMerged, TemplateSecondNotBooked,
		TemplateCancelLookupFailed, TemplateCancelNone, TemplateCancelSeveral, TemplateCancelConfirmed, TemplateCancelUnknown,
		TemplateCancelEndedMeanwhile, TemplateCancelInFlight, TemplateCancelNotRecorded,
		TemplateConfirmation, TemplateAlreadyBooked, TemplateAlreadyHeld, TemplateAlternatives, TemplateNotBooked, TemplateInReview,
		TemplateBookingCancelled, TemplateBookingCancelledRefunded, TemplateBookingCancelledKept, TemplateBookingRescheduled,
		TemplateReminderEarly, TemplateReminder, TemplateOptedOut, TemplateOptedIn, TemplateConsentNotRecorded,
		TemplatePaymentLink, TemplatePaymentExpired, TemplatePaymentRefundedLate, TemplatePaymentUnavailable,
		TemplateVoiceGreeting, TemplateVoiceGatherNext, TemplateVoiceUnknownNumber, TemplateVoiceUnassigned,
		TemplateVoiceOneMoment, TemplateVoiceConfirmed, TemplateVoiceAlreadyBooked, TemplateVoiceNotBooked,
		TemplateVoiceInReview, TemplateVoiceConfirmFollows, TemplateVoicePaymentLink,
	}
}

func knownTemplate(n TemplateName) bool {
	_, ok := defaults[German][n]
	return ok
}

// DefaultText returns the built-in text of a template in lang.
func DefaultText(lang Language, name TemplateName) (string, bool) {
	s, ok := defaults[lang][name]
	return s, ok
}

// parseTemplate parses a text and proves it executes against MessageData,
// so a template that names a field MessageData lacks is rejected when the
// file is applied, not when a customer is waiting for the message.
func parseTemplate(name TemplateName, text string) (*template.Template, error) {
	t, err := template.New(string(name)).Funcs(funcs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	sample := MessageData{Service: "s", When: "w", Booking: "b", Hold: "h", Alternatives: []string{"a"}, Amount: "m", Link: "l", Until: "u"}
	if err := t.Execute(new(strings.Builder), sample); err != nil {
		return nil, err
	}
	return t, nil
}

// builtin are the parsed defaults; they are constants of the program, so
// a broken one is a programming error caught by the first test.
var builtin = func() map[Language]map[TemplateName]*template.Template {
	out := map[Language]map[TemplateName]*template.Template{}
	for lang, texts := range defaults {
		out[lang] = map[TemplateName]*template.Template{}
		for name, text := range texts {
			t, err := parseTemplate(name, text)
			if err != nil {
				panic(fmt.Sprintf("built-in template %s/%s: %v", lang, name, err))
			}
			out[lang][name] = t
		}
	}
	return out
}()

package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Phase names one step of a booking on its way from the webhook to the
// customer's confirmation, as the phase label of
// bookonce_booking_phase_seconds.
type Phase string

// The phases in the order a booking passes them. Each is observed when it
// ends, as the time since the webhook was accepted (the inbound event's
// ReceivedAt, the moment the gateway began the request), except
// PhaseAccepted, which is that request's own time until its inbox row was
// committed.
const (
	// PhaseAccepted: the webhook request began → its inbox row committed (gateway).
	PhaseAccepted Phase = "accepted"
	// PhaseDelivered: the conversation's first workflow task that handles
	// the signal began (worker).
	PhaseDelivered Phase = "delivered"
	// PhaseDedupDecided: the cross-channel dedup decision came back.
	PhaseDedupDecided Phase = "dedup_decided"
	// PhaseAppointmentStarted: the appointment saga's first workflow task.
	PhaseAppointmentStarted Phase = "appointment_started"
	// PhaseHold: the slot is held.
	PhaseHold Phase = "hold"
	// PhaseAuthorisation: the payment saga reported the deposit authorised.
	PhaseAuthorisation Phase = "authorisation"
	// PhaseConfirm: the calendar confirmed the booking.
	PhaseConfirm Phase = "confirm"
	// PhaseCapture: the payment saga captured the deposit.
	PhaseCapture Phase = "capture"
	// PhaseConfirmationQueued: the confirmation is reserved in the outbox
	// (the appointment is Confirmed right after).
	PhaseConfirmationQueued Phase = "confirmation_queued"
	// PhaseMessageSent: the outbox relay handed the confirmation to Twilio.
	PhaseMessageSent Phase = "message_sent"
)

// Phases lists every phase in booking order (reports iterate it).
var Phases = []Phase{
	PhaseAccepted, PhaseDelivered, PhaseDedupDecided, PhaseAppointmentStarted, PhaseHold,
	PhaseAuthorisation, PhaseConfirm, PhaseCapture, PhaseConfirmationQueued, PhaseMessageSent,
}

// BookingPhaseName is the histogram of where a booking's time goes.
const BookingPhaseName = "bookonce_booking_phase_seconds"

// bookingPhaseBuckets resolve the interactive range (tens of milliseconds
// to a few seconds) finely, and reach minutes for payment links and the
// outbox relay's retries.
var bookingPhaseBuckets = []float64{.01, .025, .05, .075, .1, .15, .2, .25, .3, .4, .5, .75, 1, 1.5, 2, 3, 5, 10, 20, 30, 60, 120, 300, 1800}

// NewBookingPhases creates an unregistered bookonce_booking_phase_seconds.
// The gateway has its own (phase accepted); the worker process shares
// BookingPhases.
func NewBookingPhases() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    BookingPhaseName,
		Help:    "Seconds from a booking's webhook being accepted to the end of each phase (accepted: the webhook request until its inbox row committed), by phase and tenant.",
		Buckets: bookingPhaseBuckets,
	}, []string{"phase", "tenant"})
}

// BookingPhases is the worker process's bookonce_booking_phase_seconds:
// observed by workflow code (outside replay), the activities and the
// outbox relay; the worker's registry exposes it (activities.Collectors).
var BookingPhases = NewBookingPhases()

// ObservePhase records on h that phase ended at end for a booking whose
// webhook was accepted at since. A zero since (an event without an
// accepted time: a review decision, an API booking, a run recorded before
// the time travelled with it) or a negative span is not recorded.
func ObservePhase(h *prometheus.HistogramVec, tenant string, phase Phase, since, end time.Time) {
	if since.IsZero() || end.Before(since) {
		return
	}
	h.WithLabelValues(string(phase), tenant).Observe(end.Sub(since).Seconds())
}

package workflows

import "go.temporal.io/sdk/workflow"

// Change is a workflow.GetVersion change ID of the workflows' code with
// the newest version the code asks for. An open workflow that took a
// change's new branch carries "id-version" in its TemporalChangeVersion
// search attribute; once no open workflow needs a branch, the code may
// drop it (docs/deploy.md).
type Change struct {
	ID  string
	Max workflow.Version
}

// Changes lists every change ID the workflows' code records, for
// `starter versions` to count the open workflows of each by visibility
// (a count per change: listing every open workflow does not scale).
// TestChangesListsEveryGetVersion fails when a GetVersion is missing here.
var Changes = []Change{
	{"already-booked-links-existing", 1},
	{"appointment-baseline", 2},
	{"appointment-publishes-cancelling", 1},
	{"booking-baseline", 1},
	{"booking-lifecycle", 1},
	{"booking-no-show", 1},
	{"booking-remind-after-move", 1},
	{"booking-reschedule", 1},
	{"cancel-after-move-review", 1},
	{"cancel-again-after-it-ended", 1},
	{"cancel-honoured-until-commit", 1},
	{"cancel-refund-in-full", 1},
	{"cancelled-unconfirmed-is-answered", 1},
	{"cancelling-is-under-way", 1},
	{"card-deposit-inline", 1},
	{"change-awaits-lifecycle", 1},
	{"changes-outlast-outage", 1},
	{"close-intent-retries-until-done", 1},
	{"compensation-retries-until-done", 1},
	{"confirm-outlasts-outage", 1},
	{"consent-keywords", 1},
	{"conversation-baseline", 1},
	{"conversation-booking-changes", 1},
	{"conversation-cancel-wish", 1},
	{"conversation-drain-all-signals", 1},
	{"conversation-legacy-handover", 1},
	{"conversation-local-reads", 1},
	{"conversation-start-failure-reviewed", 1},
	{"customer-key-attributes", 1},
	{"decision-awaits-parent", 1},
	{"decision-outlasts-confirm", 1},
	{"dedup-failure-reviewed", 1},
	{"forward-cancel-refunds", 1},
	{"forward-late-cancel", 1},
	{"hold-reconcile-outlasts-outage", 1},
	{"keyed-intent-id", 1},
	{"link-never-made", 1},
	{"move-awaits-confirming", 1},
	{"move-outlasts-outage", 1},
	{"new-key-only-if-lookup-authoritative", 1},
	{"no-link-after-cancel", 1},
	{"offer-alternatives", 1},
	{"payment-link", 1},
	{"payment-link-create-rounds", 1},
	{"payment-signal-after-reset", 1},
	{"publish-booked-first", 1},
	{"publish-cancel-before-telling", 1},
	{"publish-cancelling-at-once", 1},
	{"reread-payment-link", 1},
	{"shop-calendar", 1},
	{"tell-not-booked", 1},
	{"tell-payment-link-unavailable", 1},
	{"void-known-intent", 1},
	{"void-unpaid-link", 1},
	{"wish-means-earlier-bookings", 1},
	{"wish-outlasts-outage", 1},
	{"withdraw-confirmation", 1},
}

// Package api holds the OpenAPI 3.1 documents of bookonce's HTTP APIs:
// calendar.openapi.yaml describes the calendar API (package calendar) and
// payments.openapi.yaml the Stripe-compatible payment API (package
// payments). The package has no Go code of its own; its tests check the
// documents against the routes the servers really register, so the two
// cannot drift apart.
package api

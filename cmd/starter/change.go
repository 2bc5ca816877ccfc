package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// appointmentArg checks the one argument of a command that changes a
// booking: the appointment's workflow ID.
func appointmentArg(rest []string) error {
	switch {
	case len(rest) != 1:
		return errors.New("want exactly one workflow ID, e.g. appointment:demo:<intent-id>")
	case !isAppointmentID(rest[0]):
		return fmt.Errorf("%q is not an appointment's workflow ID (appointment:<tenant>:<intent-id>; `starter book` prints it)", rest[0])
	}
	return nil
}

// isAppointmentID reports whether id has an appointment's form
// (appointment:<tenant>:<intent-id>); whose it is, the API decides.
func isAppointmentID(id string) bool {
	tenant, ok := reference.TenantOf(id)
	return ok && reference.IsAppointmentOf(tenant, id)
}

// postChange sends a change of the booking id (change: "cancel",
// "no-show") through the gateway's API under the Idempotency-Key key,
// and returns the booking's state. The default key derives from the
// command and the ID, so running a command again answers the first result
// instead of acting twice.
func postChange(id, change, key string, body any) (lifecycle.State, error) {
	if key == "" {
		key = "starter-" + change + ":" + id
	}
	g, err := dialGateway()
	if err != nil {
		return lifecycle.State{}, err
	}
	data, err := g.doWith(http.MethodPost, "/v1/appointments/"+url.PathEscape(id)+"/"+change, body, http.Header{"Idempotency-Key": {key}})
	if err != nil {
		return lifecycle.State{}, err
	}
	var st lifecycle.State
	if err := json.Unmarshal(data, &st); err != nil {
		return lifecycle.State{}, fmt.Errorf("decode the gateway's answer: %w", err)
	}
	return st, nil
}

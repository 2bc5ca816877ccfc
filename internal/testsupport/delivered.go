package testsupport

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/twilio"
)

// Delivered waits until the outbox relay has finished with every message
// reserved for reference (none is still 'pending') and then returns what
// reached the customer: the messages the fake Twilio accepted for that
// number (on any channel) whose body contains part. A test that says "one
// message" counts these, not outbox rows: a unique index already caps the
// rows, while a relay that sends one row twice shows up only here.
func Delivered(t testing.TB, pool *pgxpool.Pool, fake *twilio.FakeServer, reference, customer, part string) []twilio.FakeMessage {
	t.Helper()
	Eventually(t, 30*time.Second, "the relay sent every message of "+reference, func() bool {
		var reserved, pending int
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE state = 'pending')
			FROM outbox_messages WHERE reference = $1`, reference).Scan(&reserved, &pending))
		return reserved > 0 && pending == 0
	})
	return Accepted(fake, customer, part)
}

// Accepted is what fake has accepted so far for customer's number (on any
// channel) whose body contains part: what reached the customer, without
// waiting for anything still on its way.
func Accepted(fake *twilio.FakeServer, customer, part string) []twilio.FakeMessage {
	var got []twilio.FakeMessage
	for _, m := range fake.Messages() {
		if strings.TrimPrefix(m.To, "whatsapp:") == customer && strings.Contains(m.Body, part) {
			got = append(got, m)
		}
	}
	return got
}

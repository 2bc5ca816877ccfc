// Command calendar serves the calendar API (holds, bookings, availability)
// with the Idempotency-Key contract on PostgreSQL.
package main

import (
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
)

func main() {
	stack.Command("calendar API", config.CalendarSecrets, stack.RunCalendar)
}

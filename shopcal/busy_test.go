package shopcal_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/shopcal"
)

// staffEvent is what a calendar app PUTs for an event a person entered.
func (c calendar) staffEvent(t *testing.T, name, vevents string) {
	t.Helper()
	testsupport.StaffEvent(t, c.url, name, vevents)
}

// TestBusyIsWhatStaffEntered: what staff put in the bay's calendar blocks
// it: a single appointment, every instance of a weekly one (less the week
// it was dropped, with the instance moved to another hour at its new
// time), a whole day off in the shop's time zone. Not: an event marked
// free, a cancelled one, bookonce's own bookings, anything outside the
// range.
func TestBusyIsWhatStaffEntered(t *testing.T) {
	t.Parallel()
	c, ctx := newCalendar(t), context.Background()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	c.staffEvent(t, "oil", `
BEGIN:VEVENT
UID:staff-oil@app
DTSTAMP:20300101T000000Z
DTSTART:20300312T080000Z
DTEND:20300312T090000Z
SUMMARY:Ölwechsel Herr Maier
END:VEVENT`)
	c.staffEvent(t, "weekly", `
BEGIN:VEVENT
UID:staff-weekly@app
DTSTAMP:20300101T000000Z
DTSTART;TZID=Europe/Berlin:20300304T070000
DTEND;TZID=Europe/Berlin:20300304T080000
RRULE:FREQ=WEEKLY;COUNT=6
EXDATE;TZID=Europe/Berlin:20300311T070000
SUMMARY:Wartung Hebebühne
END:VEVENT
BEGIN:VEVENT
UID:staff-weekly@app
DTSTAMP:20300101T000000Z
RECURRENCE-ID;TZID=Europe/Berlin:20300318T070000
DTSTART;TZID=Europe/Berlin:20300318T130000
DTEND;TZID=Europe/Berlin:20300318T140000
SUMMARY:Wartung Hebebühne (verschoben)
END:VEVENT`)
	c.staffEvent(t, "dayoff", `
BEGIN:VEVENT
UID:staff-dayoff@app
DTSTAMP:20300101T000000Z
DTSTART;VALUE=DATE:20300313
DTEND;VALUE=DATE:20300314
SUMMARY:Betriebsausflug
END:VEVENT`)
	c.staffEvent(t, "free", `
BEGIN:VEVENT
UID:staff-free@app
DTSTAMP:20300101T000000Z
DTSTART:20300312T100000Z
DTEND:20300312T110000Z
TRANSP:TRANSPARENT
SUMMARY:Notiz
END:VEVENT`)
	c.staffEvent(t, "cancelled", `
BEGIN:VEVENT
UID:staff-cancelled@app
DTSTAMP:20300101T000000Z
DTSTART:20300312T120000Z
DTEND:20300312T130000Z
STATUS:CANCELLED
SUMMARY:abgesagt
END:VEVENT`)
	c.staffEvent(t, "later", `
BEGIN:VEVENT
UID:staff-later@app
DTSTAMP:20300101T000000Z
DTSTART:20300501T080000Z
DTEND:20300501T090000Z
SUMMARY:ausserhalb
END:VEVENT`)
	require.NoError(t, shopcal.Put(ctx, c.provider, booking(t))) // 2030-03-12 09:00 UTC, bookonce's own

	from, to := time.Date(2030, 3, 4, 0, 0, 0, 0, berlin), time.Date(2030, 3, 25, 0, 0, 0, 0, berlin)
	got, err := c.provider.Busy(ctx, from, to, berlin)
	require.NoError(t, err)
	var lines []string
	for _, iv := range got {
		lines = append(lines, iv.UID+" "+iv.Start.In(berlin).Format("01-02 15:04")+"-"+iv.End.In(berlin).Format("01-02 15:04"))
	}
	require.Equal(t, []string{
		"staff-weekly@app 03-04 07:00-03-04 08:00",
		"staff-oil@app 03-12 09:00-03-12 10:00",
		"staff-dayoff@app 03-13 00:00-03-14 00:00",
		"staff-weekly@app 03-18 13:00-03-18 14:00", // moved by its override; the 11th was dropped, the 25th is past the range
	}, lines)
}

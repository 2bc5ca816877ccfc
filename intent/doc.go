// Package intent turns what a customer writes or says (WhatsApp text, German
// speech-to-text from Twilio voice) into a structured booking intent, and
// that intent into a canonical identity.
//
// Why it exists: retries and cross-channel duplicates can only merge when
// two differently phrased sentences of the same wish ("Dienstag um 14 Uhr
// Reifenwechsel", "tire change tuesday 2pm", "Nimm Dienstag um zwei") end up
// as the same Canonical and therefore the same Canonical.ID. The extractor
// never guesses: whatever is missing or ambiguous becomes a clarifying
// Question back to the customer instead of a booking.
//
// Grammar understood by Rules (case-insensitive; "ä" and "ae" alike;
// punctuation, emoji and invalid UTF-8 tolerated):
//
//   - Days: Montag..Sonntag, Sonnabend, "dienstags", "Di." (two-letter
//     abbreviations only with a dot), monday..sunday, mon/tue/wed/thu/fri,
//     "sat."/"sun."; heute, morgen, übermorgen, today, tomorrow, tonight,
//     "day after tomorrow", "in 3 Tagen"/"in three days"; "17. August",
//     "17 August", "17.08.", "17.08", "17.08.2027", "17.08.27", "am 3.12.",
//     "August 17(th)", "the 17th of August", "2026-12-01",
//     "2026-12-01T14:00", a day alone ("am 17.", "der 13.", "the 17th").
//   - Times: "um 14 Uhr", "14 Uhr 30", "14:30", "14.30 Uhr", "14h", "14h30",
//     "14uhr", "um zwei", "ein Uhr", "vierzehn Uhr dreißig", "halb drei",
//     "viertel nach zwei", "viertel vor drei", "dreiviertel drei", "zehn nach
//     zwei", "morgens um 9", "früh um 9", "9 Uhr morgens", "nachmittags um
//     3", "mittags", "2pm", "2 p.m.", "at 2", "at 10:30am", "at two thirty",
//     "quarter past two", "half past two", "ten to three", "9 o'clock",
//     "noon", "midnight".
//   - Services: the catalogue's synonyms, as whole words, plurals ("tires"),
//     with up to two words in between ("change my tires") and inside
//     compounds ("Reifenwechseltermin", "Inspektionstermin").
//   - Kinds: cancellation ("stornieren", "absagen", "ich sage ... ab",
//     "nicht mehr", "cancel") beats confirmation ("passt", "einverstanden",
//     "nehme ich", "nimm", "sounds good", "that works"; weaker: "ja", "ok",
//     "gerne", "yes") which beats a booking ("möchte", "hätte gern", "kann
//     ich", "book", a service); a weak confirmation loses to a booking
//     ("Ja gerne, Reifenwechsel am Dienstag ..."). Rescheduling
//     ("verschieben", "absagen und stattdessen ...") is KindUnclear with a
//     question, because it is two operations.
//
// Decisions taken by Rules (all relative to "now" in the tenant's location):
//
//   - A bare weekday ("Dienstag", "tuesday") is the coming one. When today is
//     that weekday it means today if the named time is still ahead, otherwise
//     the same weekday next week; without a time it is ambiguous and asked.
//   - "nächsten Dienstag" / "next tuesday" / "kommenden Dienstag" is the
//     coming Tuesday, or next week's when today is Tuesday.
//     "übernächsten Dienstag" adds a week. "Dienstag nächste Woche" /
//     "tuesday next week" is the Tuesday of the next calendar week (Mon-Sun).
//   - An explicit date wins over a weekday modifier when the weekday agrees
//     ("nächsten Dienstag, 8.12."); when it disagrees the customer is asked.
//   - A date without a year that already passed this year is next year's; a
//     day without a month ("am 17.", "the 17th") is its next occurrence.
//   - A bare hour 1..7 without "morgens", "früh", "vormittags", "am" or a
//     zero-padded 24-hour form ("07:30") means the afternoon, because the
//     workshop is open 8-18: "um zwei" is 14:00, "halb drei" is 14:30.
//     "nachmittags"/"abends" move hours below 12 to the afternoon.
//   - Two different times, dates, weekdays or services, a time range ("ab
//     14 Uhr", "zwischen 14 und 15 Uhr") or a date that does not exist is
//     never resolved by picking one: Result.Question asks instead.
//   - A clause with a negation ("Dienstag passt nicht, aber Mittwoch um 10")
//     contributes nothing; the rest of the message still counts.
//   - Confirmations carry no "missing" questions: which offered slot a bare
//     "ja, passt" accepts is known only to the conversation, not the text.
package intent

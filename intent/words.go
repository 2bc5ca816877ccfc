package intent

import (
	"strings"
	"time"
)

// Weekday words. Two-letter German abbreviations count only with a dot
// ("Di."), because "so", "do" and "mo" are ordinary words.
var (
	weekdayWords = map[string]time.Weekday{
		"montag": time.Monday, "dienstag": time.Tuesday, "mittwoch": time.Wednesday,
		"donnerstag": time.Thursday, "freitag": time.Friday, "samstag": time.Saturday,
		"sonnabend": time.Saturday, "sonntag": time.Sunday,
		"montags": time.Monday, "dienstags": time.Tuesday, "mittwochs": time.Wednesday,
		"donnerstags": time.Thursday, "freitags": time.Friday, "samstags": time.Saturday,
		"sonntags": time.Sunday,
		"monday":   time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
		"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
		"sunday": time.Sunday,
		"mon":    time.Monday, "tue": time.Tuesday, "tues": time.Tuesday, "wed": time.Wednesday,
		"thu": time.Thursday, "thur": time.Thursday, "thurs": time.Thursday, "fri": time.Friday,
	}
	dottedWeekdays = map[string]time.Weekday{
		"mo": time.Monday, "di": time.Tuesday, "mi": time.Wednesday, "do": time.Thursday,
		"fr": time.Friday, "sa": time.Saturday, "so": time.Sunday,
		"sat": time.Saturday, "sun": time.Sunday,
	}
)

// weekdayOf recognises a weekday token.
func weekdayOf(t token) (time.Weekday, bool) {
	if wd, ok := weekdayWords[t.s]; ok {
		return wd, true
	}
	if t.dot {
		wd, ok := dottedWeekdays[t.s]
		return wd, ok
	}
	return 0, false
}

// months maps German and English month names and abbreviations. They only
// count next to a day number, so "may I" is no month.
var months = map[string]time.Month{
	"januar": 1, "jaenner": 1, "january": 1, "jan": 1,
	"februar": 2, "feber": 2, "february": 2, "feb": 2,
	"maerz": 3, "march": 3, "mar": 3, "mrz": 3, "maer": 3,
	"april": 4, "apr": 4,
	"mai": 5, "may": 5,
	"juni": 6, "june": 6, "jun": 6,
	"juli": 7, "july": 7, "jul": 7,
	"august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9,
	"oktober": 10, "october": 10, "okt": 10, "oct": 10,
	"november": 11, "nov": 11,
	"dezember": 12, "december": 12, "dez": 12, "dec": 12,
}

// Number words. German composites ("fuenfundvierzig") are generated so
// minutes read aloud ("vierzehn Uhr dreissig") parse.
var (
	germanNumbers  = buildGermanNumbers()
	englishNumbers = map[string]int{
		"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
		"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
		"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
		"nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	}
)

func buildGermanNumbers() map[string]int {
	m := map[string]int{
		"eins": 1, "zwei": 2, "zwo": 2, "drei": 3, "vier": 4, "fuenf": 5, "sechs": 6,
		"sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwoelf": 12,
		"dreizehn": 13, "vierzehn": 14, "fuenfzehn": 15, "sechzehn": 16, "siebzehn": 17,
		"achtzehn": 18, "neunzehn": 19, "zwanzig": 20, "dreissig": 30, "vierzig": 40,
		"fuenfzig": 50,
	}
	units := []string{"ein", "zwei", "drei", "vier", "fuenf", "sechs", "sieben", "acht", "neun"}
	for ti, tens := range []string{"zwanzig", "dreissig", "vierzig", "fuenfzig"} {
		for ui, u := range units {
			m[u+"und"+tens] = (ti+2)*10 + ui + 1
		}
	}
	return m
}

// Lexicons for deciding the kind of a message. Entries with a space are
// phrases of consecutive tokens.
var (
	cancelWords = lex(
		"stornieren", "storniere", "stornier", "storniert", "stornierung", "storno",
		"absagen", "absage", "abzusagen", "abbestellen", "abbestelle",
		"cancel", "canceled", "cancelled", "cancellation", "nicht mehr", "no longer",
		"call off",
	)
	rescheduleWords = lex(
		"verschieben", "verschiebe", "verlegen", "verlege", "umbuchen", "umbuche",
		"umlegen", "umterminieren", "reschedule", "postpone",
		"move it", "move my", "move the appointment", "move the booking",
	)
	// insteadWords turn a cancellation into a reschedule ("absagen, lieber
	// Mittwoch").
	insteadWords  = lex("lieber", "stattdessen", "instead", "rather")
	strongConfirm = lex(
		"passt", "passen", "einverstanden", "nehme ich", "nehm ich", "ich nehme", "nehmen wir",
		"nimm", "nehme", "geht klar", "in ordnung", "machen wir", "klingt gut",
		"hoert sich gut an", "bestaetige", "bestaetigen", "bestaetigt", "abgemacht",
		"sounds good", "sounds great", "sounds fine", "that works", "works for me", "works",
		"ill take", "i take", "take it", "lets do", "confirm", "confirmed", "deal",
	)
	weakConfirm = lex(
		"ja", "jo", "jup", "jawohl", "jep", "ok", "okay", "okey", "oki", "gerne", "gern",
		"genau", "gut", "super", "prima", "perfekt", "top", "klar", "sicher", "richtig",
		"geht", "yes", "yeah", "yep", "yup", "sure", "fine", "great", "perfect", "good",
		"alright", "correct", "warum nicht", "why not",
	)
	bookWords = lex(
		"buchen", "buche", "gebucht", "book", "booking", "vereinbaren", "reservieren",
		"reserviere", "reserve", "moechte", "moechten", "haette", "haetten", "brauche",
		"brauchen", "benoetige", "will", "wuerde", "kann ich", "koennte ich", "koennen wir",
		"kommen", "vorbeikommen", "vorbeibringen", "einen termin", "neuen termin", "frei",
		"need", "want", "wanna", "would", "like to", "can i", "could i", "schedule",
		"an appointment", "a slot", "available",
	)
	// negations are scoped to their clause; interjections only stop a
	// message from being a confirmation.
	negations     = wordSet("nicht", "kein", "keine", "keinen", "not", "doesnt", "dont", "cant", "cannot", "wont", "isnt", "never", "nie")
	interjections = wordSet("nein", "nee", "noe", "no", "nope", "nah")
	// notNegations are idioms that look negative and are not.
	notNegations = lex("kein problem", "no problem", "no worries", "warum nicht", "why not", "nicht schlecht", "not bad")
	// clauseStarters open a new clause even without punctuation (speech).
	clauseStarters = map[string]bool{"aber": true, "sondern": true, "but": true, "jedoch": true, "lieber": true, "rather": true, "instead": true, "stattdessen": true}
	// abbreviations end with a dot without ending a sentence.
	abbreviations = map[string]bool{"ca": true, "bzw": true, "z": true, "b": true, "nr": true, "str": true, "dr": true, "hr": true, "fr": true, "vs": true, "etc": true, "a.m": true, "p.m": true}
)

// Language markers: words that occur in only one of the two languages.
// Ambiguous ones ("am", "august", "ok") are left out.
var (
	germanMarkers = wordSet("ich", "um", "uhr", "der", "die", "das", "den", "dem", "bitte", "ja", "nein",
		"termin", "moechte", "haette", "gerne", "kann", "mir", "passt", "morgen", "heute", "uebermorgen",
		"naechsten", "zur", "zum", "fuer", "und", "oder", "nicht", "halb", "viertel", "wir", "sie",
		"mein", "meine", "einen", "ein", "eine", "mich", "geht", "morgens", "frueh", "nachmittags",
		"stornieren", "absagen", "montag", "dienstag", "mittwoch", "donnerstag", "freitag",
		"samstag", "sonntag", "januar", "februar", "maerz", "mai", "juni", "juli", "oktober", "dezember",
		"reifenwechsel", "inspektion", "oelwechsel", "reifen", "nimm", "nehme", "danke", "hallo")
	englishMarkers = wordSet("i", "the", "at", "on", "please", "yes", "no", "appointment", "book", "tomorrow",
		"today", "next", "my", "for", "tire", "tyre", "tires", "tyres", "change", "cancel", "would",
		"like", "can", "works", "sounds", "good", "pm", "oclock", "and", "or", "not", "want", "need",
		"to", "a", "an", "is", "it", "this", "of", "day", "after", "past", "quarter", "noon",
		"morning", "afternoon", "evening", "monday", "tuesday", "wednesday", "thursday", "friday",
		"saturday", "sunday", "january", "february", "march", "may", "june", "july", "october",
		"december", "oil", "inspection", "thanks", "hello", "hi", "take", "that")
)

// lexicon is a list of phrases, each split into words once.
type lexicon [][]string

func lex(phrases ...string) lexicon {
	l := make(lexicon, len(phrases))
	for i, ph := range phrases {
		l[i] = strings.Fields(ph)
	}
	return l
}

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// detectLang counts language-specific words; ties go to German, the
// workshop's language.
func detectLang(toks []token) string {
	de, en := 0, 0
	for _, t := range toks {
		switch {
		case germanMarkers[t.s]:
			de++
		case englishMarkers[t.s]:
			en++
		case isTimeWord(t.s) && (hasSuffix(t.s, "am") || hasSuffix(t.s, "pm") || hasSuffix(t.s, ".m")):
			en++
		}
	}
	if en > de {
		return "en"
	}
	return "de"
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

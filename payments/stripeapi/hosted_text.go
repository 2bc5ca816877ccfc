package stripeapi

import (
	"strconv"
	"strings"
	"time"
)

// pageText is the wording of the hosted page in one language.
type pageText struct {
	Title, PayBy, ChooseCard, Pay, Cancel, Challenge, Approve, Deny, Done, Back string
	NotFound, Expired, Complete, Unusable, BadRequest, StepPaid, Failed         string
	Cards                                                                       map[string]string
}

// pageTexts are German and English; the session's locale (or, for auto,
// the browser's Accept-Language) chooses.
var pageTexts = map[string]pageText{
	"de": {
		Title: "Anzahlung bezahlen", PayBy: "Bitte bezahlen Sie bis", ChooseCard: "Testkarte wählen", Pay: "Bezahlen",
		Cancel: "Abbrechen", Challenge: "Ihre Bank bittet Sie, diese Zahlung zu bestätigen (3-D Secure).",
		Approve: "Zahlung bestätigen", Deny: "Ablehnen", Done: "Vielen Dank! Ihre Zahlung ist eingegangen.", Back: "Zurück zum Händler",
		NotFound: "Diesen Zahlungslink gibt es nicht.", Expired: "Dieser Zahlungslink ist abgelaufen.",
		Complete: "Dieser Link ist bereits bezahlt. Es wird nichts ein zweites Mal abgebucht.",
		Unusable: "Diese Zahlung kann nicht mehr ausgeführt werden.", BadRequest: "Die Anfrage war ungültig:",
		StepPaid: "Diese Buchung ist bereits bezahlt.", Failed: "Ein Fehler ist aufgetreten. Bitte versuchen Sie es gleich noch einmal.",
		Cards: map[string]string{
			"pm_card_visa": "Visa – wird autorisiert", "pm_card_chargeDeclined": "Karte abgelehnt",
			"pm_card_chargeDeclinedInsufficientFunds": "Karte ohne Deckung", cardAuthenticationRequired: "Karte mit 3-D Secure",
		},
	},
	"en": {
		Title: "Pay your deposit", PayBy: "Please pay by", ChooseCard: "Choose a test card", Pay: "Pay",
		Cancel: "Cancel", Challenge: "Your bank asks you to confirm this payment (3-D Secure).",
		Approve: "Confirm payment", Deny: "Decline", Done: "Thank you! Your payment has been received.", Back: "Back to the merchant",
		NotFound: "This payment link does not exist.", Expired: "This payment link has expired.",
		Complete: "This link has already been paid. Nothing is charged a second time.",
		Unusable: "This payment can no longer be made.", BadRequest: "The request was invalid:",
		StepPaid: "This booking has already been paid.", Failed: "Something went wrong. Please try again in a moment.",
		Cards: map[string]string{
			"pm_card_visa": "Visa – authorised", "pm_card_chargeDeclined": "Card declined",
			"pm_card_chargeDeclinedInsufficientFunds": "Card with insufficient funds", cardAuthenticationRequired: "Card with 3-D Secure",
		},
	},
}

// pageCards are the test cards the page offers, in order.
var pageCards = []string{"pm_card_visa", "pm_card_chargeDeclined", "pm_card_chargeDeclinedInsufficientFunds", cardAuthenticationRequired}

// pageLang chooses de or en: the locale asked for, else the browser's
// first preference, else English.
func pageLang(locale, acceptLanguage string) string {
	if locale == "de" || locale == "en" {
		return locale
	}
	first, _, _ := strings.Cut(acceptLanguage, ",")
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(first)), "de") {
		return "de"
	}
	return "en"
}

var currencySymbols = map[string]string{"eur": "€", "usd": "$", "gbp": "£", "jpy": "¥"}

// formatAmount writes minor units as a German ("1.234,56 €") or English
// ("€1,234.56") amount; jpy has no minor unit.
func formatAmount(amount int64, currency, lang string) string {
	decimals := 2
	if currency == "jpy" {
		decimals = 0
	}
	whole, frac := amount, int64(0)
	if decimals == 2 {
		whole, frac = amount/100, amount%100
	}
	group, point := ",", "."
	if lang == "de" {
		group, point = ".", ","
	}
	digits := strconv.FormatInt(whole, 10)
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(group)
		}
		b.WriteRune(c)
	}
	num := b.String()
	if decimals == 2 {
		num += point + leftPad2(frac)
	}
	sym, ok := currencySymbols[currency]
	switch {
	case lang == "de" || !ok:
		if !ok {
			sym = strings.ToUpper(currency)
		}
		if lang == "de" {
			return num + "\u00a0" + sym
		}
		return sym + "\u00a0" + num
	}
	return sym + num
}

func leftPad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// formatTime writes the session's deadline in the page's zone.
func formatTime(t time.Time, loc *time.Location, lang string) string {
	if loc == nil {
		loc = time.UTC
	}
	t = t.In(loc)
	if lang == "de" {
		return t.Format("02.01.2006, 15:04 Uhr (MST)")
	}
	return t.Format("2 Jan 2006, 15:04 (MST)")
}

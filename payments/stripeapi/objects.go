package stripeapi

import (
	"encoding/json"
	"time"

	"github.com/bookonce/bookonce/payments"
)

// intentRow is a payment_intents row.
type intentRow struct {
	ID                 string
	Amount             int64
	Currency           string
	Status             string
	CaptureMethod      string
	AmountCaptured     int64
	AmountRefunded     int64 // refunds of captured money only
	PaymentMethod      string
	ChargeID           string
	Customer           string
	Description        string
	Metadata           map[string]string
	CancellationReason string
	LastPaymentError   json.RawMessage
	CreatedAt          time.Time
	CanceledAt         *time.Time
}

// intentObject is a PaymentIntent on the wire, with Stripe's field names
// and nulls, so stripe-go's PaymentIntent decodes it.
type intentObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Amount             int64             `json:"amount"`
	AmountCapturable   int64             `json:"amount_capturable"`
	AmountReceived     int64             `json:"amount_received"`
	CanceledAt         *int64            `json:"canceled_at"`
	CancellationReason *string           `json:"cancellation_reason"`
	CaptureMethod      string            `json:"capture_method"`
	ConfirmationMethod string            `json:"confirmation_method"`
	Created            int64             `json:"created"`
	Currency           string            `json:"currency"`
	Customer           *string           `json:"customer"`
	Description        *string           `json:"description"`
	LastPaymentError   json.RawMessage   `json:"last_payment_error"`
	LatestCharge       any               `json:"latest_charge"` // ID, expanded charge, or null
	Livemode           bool              `json:"livemode"`
	Metadata           map[string]string `json:"metadata"`
	PaymentMethod      *string           `json:"payment_method"`
	PaymentMethodTypes []string          `json:"payment_method_types"`
	Status             string            `json:"status"`
}

// chargeObject is the Charge behind a confirmed intent, shown only when a
// client expands latest_charge. Like Stripe, an uncaptured remainder that
// is released (cancel, partial capture) counts as refunded on the charge.
type chargeObject struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	Amount         int64             `json:"amount"`
	AmountCaptured int64             `json:"amount_captured"`
	AmountRefunded int64             `json:"amount_refunded"`
	Captured       bool              `json:"captured"`
	Created        int64             `json:"created"`
	Currency       string            `json:"currency"`
	Livemode       bool              `json:"livemode"`
	Metadata       map[string]string `json:"metadata"`
	Paid           bool              `json:"paid"`
	PaymentIntent  string            `json:"payment_intent"`
	PaymentMethod  string            `json:"payment_method"`
	Refunded       bool              `json:"refunded"`
	Status         string            `json:"status"`
	// BillingDetails and Disputed are sent on every Stripe charge; this API
	// collects no billing details and has no disputes.
	BillingDetails chargeBillingDetails `json:"billing_details"`
	Disputed       bool                 `json:"disputed"`
}

// chargeBillingDetails is a charge's billing_details, all unknown.
type chargeBillingDetails struct {
	Address *struct{} `json:"address"`
	Email   *string   `json:"email"`
	Name    *string   `json:"name"`
	Phone   *string   `json:"phone"`
	TaxID   *string   `json:"tax_id"`
}

// refundRow is a refunds row.
type refundRow struct {
	ID              string
	PaymentIntentID string
	ChargeID        string
	Amount          int64
	Currency        string
	Status          string
	Reason          string
	Metadata        map[string]string
	CreatedAt       time.Time
}

// refundObject is a Refund on the wire.
type refundObject struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Amount        int64             `json:"amount"`
	Charge        string            `json:"charge"`
	Created       int64             `json:"created"`
	Currency      string            `json:"currency"`
	Metadata      map[string]string `json:"metadata"`
	PaymentIntent string            `json:"payment_intent"`
	Reason        *string           `json:"reason"`
	Status        string            `json:"status"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// object renders a row; expandCharge replaces latest_charge's ID by the
// charge object.
func (r intentRow) object(expandCharge bool) *intentObject {
	o := &intentObject{
		ID: r.ID, Object: "payment_intent", Amount: r.Amount, CaptureMethod: r.CaptureMethod,
		ConfirmationMethod: "automatic", Created: r.CreatedAt.Unix(), Currency: r.Currency,
		Customer: nullable(r.Customer), Description: nullable(r.Description),
		CancellationReason: nullable(r.CancellationReason), LastPaymentError: r.LastPaymentError,
		Metadata: nonNilMap(r.Metadata), PaymentMethod: nullable(r.PaymentMethod),
		PaymentMethodTypes: []string{"card"}, Status: r.Status,
	}
	if len(o.LastPaymentError) == 0 {
		o.LastPaymentError = json.RawMessage("null")
	}
	if r.Status == payments.StatusRequiresCapture {
		o.AmountCapturable = r.Amount
	}
	o.AmountReceived = r.AmountCaptured
	if r.CanceledAt != nil {
		t := r.CanceledAt.Unix()
		o.CanceledAt = &t
	}
	switch {
	case r.ChargeID == "":
		o.LatestCharge = nil
	case expandCharge:
		o.LatestCharge = r.charge()
	default:
		o.LatestCharge = r.ChargeID
	}
	return o
}

func (r intentRow) charge() *chargeObject {
	captured := r.Status == payments.StatusSucceeded
	released := int64(0) // authorised money given back without a refund
	if captured {
		released = r.Amount - r.AmountCaptured
	} else if r.Status == payments.StatusCanceled {
		released = r.Amount
	}
	refunded := released + r.AmountRefunded
	return &chargeObject{
		ID: r.ChargeID, Object: "charge", Amount: r.Amount, AmountCaptured: r.AmountCaptured,
		AmountRefunded: refunded, Captured: captured, Created: r.CreatedAt.Unix(), Currency: r.Currency,
		Metadata: nonNilMap(r.Metadata), Paid: true, PaymentIntent: r.ID, PaymentMethod: r.PaymentMethod,
		Refunded: refunded == r.Amount, Status: "succeeded",
	}
}

func (r refundRow) object() *refundObject {
	return &refundObject{
		ID: r.ID, Object: "refund", Amount: r.Amount, Charge: r.ChargeID, Created: r.CreatedAt.Unix(),
		Currency: r.Currency, Metadata: nonNilMap(r.Metadata), PaymentIntent: r.PaymentIntentID,
		Reason: nullable(r.Reason), Status: r.Status,
	}
}

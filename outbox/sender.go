package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/codes"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/outcome"
)

// Provider sends a message and finds one it may have sent. to is a
// channel address: "whatsapp:+49…" for WhatsApp, a plain E.164 number for
// SMS. twilio.Client is the production Provider.
//
// Send's errors tell the relay what happened through outcome.Classed
// (read with outcome.Of), decided once at the provider's client boundary
// from what the provider answered. Final: the provider refused the
// message for good; Retryable: it certainly did not take it. Unknown, and
// any error without a class, is an unknown outcome: the message may
// exist, and only a lookup may settle it.
//
// from is the sender's number (E.164; "" for the provider's default): a
// shop's messages leave from its own number.
type Provider interface {
	Send(ctx context.Context, from, to, body, callback string) (string, error)
	// FindSent lists the provider's messages from from to to with exactly
	// body, created since (less the provider's clock skew), earliest first.
	FindSent(ctx context.Context, from, to, body string, since time.Time) ([]string, error)
}

// AuthoritativeLister is implemented by a Provider whose FindSent sees
// every message the provider accepted as soon as the call that created it
// has ended (Twilio's Messages list does: a created message is listed at
// once, queued or not). For such a provider "not found", asked after the
// attempt's call has certainly ended, proves the message absent, so the
// row may be sent again (rule 13: a new attempt only where absence is
// provable). A provider without it leaves such rows to a person.
type AuthoritativeLister interface {
	AuthoritativeListing() bool
}

// maxSends bounds the sends of one row: a message that is repeatedly not
// found after unknown outcomes points at something a person should see.
const maxSends = 3

// DefaultSendTimeout is Sender.SendTimeout when it is zero.
const DefaultSendTimeout = 2 * time.Minute

// maxPerRun bounds the rows one RunOnce handles.
const maxPerRun = 500

// Sender is the outbox relay: it sends every reserved (pending) message
// exactly once, or hands it to a person.
//
// A row is claimed with FOR UPDATE SKIP LOCKED and, if it was never
// attempted, marked attempted (attempted_at, claimed until now +
// SendTimeout) in a committed transaction before the provider is called
// (reserve, act, record: rule 6). A second relay skips it while it is
// locked and ignores it while it is claimed. After the call:
//   - success: the provider's ID is stored and the row is 'sent';
//   - final refusal: 'failed';
//   - retryable (nothing reached the provider): not attempted again, sent
//     by a later run;
//   - unknown outcome (timeout, lost response, an error answer that
//     proves nothing, e.g. a proxy's bare 503): left attempted.
//
// A row attempted before and older than SendTimeout (unknown outcome, or a
// relay that died mid-send) is reconciled, never re-sent: FindSent by
// recipient and body since the reservation; found: its ID and 'sent'; not
// found: sent again where the provider's list is authoritative (at most
// maxSends in all), else 'review', for a person to decide (rule 7).
type Sender struct {
	Store       *Store
	Provider    Provider
	SendTimeout time.Duration
	// CallbackURL gives the provider's status callback URL for a message
	// ID (see StatusCallback); nil: no callback.
	CallbackURL func(msgID string) string
	Now         func() time.Time
	// Log receives outcomes that need attention; nil: slog.Default().
	Log *slog.Logger
	// Suppress reports whether a row never attempted must not be sent:
	// its recipient (as stored: "whatsapp:+49…" or "+49…") opted out of
	// its kind (package consent: reminders after a STOP). Asked when the
	// row is claimed, so a STOP holds back reminders already reserved.
	// An error leaves the row pending for a later run; nil: none is.
	Suppress func(ctx context.Context, tenant, kind, recipient string) (bool, error)
	// From is the number a tenant's messages on a channel leave from (""
	// or nil: the provider's default). It is read when a row is first
	// attempted and stored with it: a reconciliation asks for the message
	// between the numbers it was sent between.
	From func(tenant, channel string) string
	// Window reports whether recipient (E.164) wrote to tenant on
	// WhatsApp recently enough for free-form text at now (window.go);
	// Template gives the tenant's approved template for a row's template
	// name, filled with its fields (ok false: none). Either nil: every
	// row goes as text.
	Window   func(ctx context.Context, tenant, recipient string, now time.Time) (bool, error)
	Template func(tenant, name string, fields map[string]string) (Template, bool)
	// SMSFallback are the failure codes (reported by status callback) of
	// a WhatsApp message that go once more by SMS: the number has no
	// WhatsApp (fallback.go). Empty: none.
	SMSFallback []string
	// StatusPoll is how long a message may stay 'sent' before the relay
	// asks a StatusReader provider for its status, in case its status
	// callback was lost (poll.go). 0: DefaultStatusPoll; negative: never.
	StatusPoll time.Duration
	polledAt   atomic.Int64 // unix nanoseconds of the last status poll
}

// Channels the relay sends through its Provider; rows of other channels
// stay pending for another relay.
var relayChannels = []string{"whatsapp", "sms", "voice"}

// address is the channel address of a recipient: WhatsApp carries a
// "whatsapp:" prefix; a caller (voice) and SMS get an SMS.
func address(channel, recipient string) string {
	if channel == "whatsapp" && !strings.HasPrefix(recipient, "whatsapp:") {
		return "whatsapp:" + recipient
	}
	return recipient
}

func (s *Sender) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Sender) timeout() time.Duration {
	if s.SendTimeout > 0 {
		return s.SendTimeout
	}
	return DefaultSendTimeout
}

// callTimeout bounds one provider call well inside the claim, so a call
// has ended before another relay may reconcile its row.
func (s *Sender) callTimeout() time.Duration { return s.timeout() / 2 }

func (s *Sender) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Run calls RunOnce every interval until ctx ends.
func (s *Sender) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.RunOnce(ctx); err != nil && ctx.Err() == nil {
			s.log().Error("outbox relay run", "err", redact(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RunOnce handles every due row once: sends the ones never attempted and
// reconciles attempted ones older than SendTimeout. sent counts the rows
// that became 'sent' (by a send or by reconciliation). Provider outcomes
// are recorded on the rows; err reports what kept the relay from doing
// its work (database, failed lookups).
func (s *Sender) RunOnce(ctx context.Context) (sent int, err error) {
	var errs []error
	if err := s.pollStatuses(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := s.fallBack(ctx); err != nil {
		errs = append(errs, err)
	}
	handled := []string{} // never nil: "id <> ALL(NULL)" would match nothing
	for range maxPerRun {
		if ctx.Err() != nil {
			break
		}
		c, ok, err := s.claim(ctx, handled)
		if err != nil {
			errs = append(errs, err)
			break
		}
		if !ok {
			break
		}
		handled = append(handled, c.id)
		if c.expired {
			continue
		}
		if c.unreadable != nil {
			errs = append(errs, c.unreadable)
			continue
		}
		var done bool
		if c.attempted {
			done, err = s.reconcile(ctx, c)
		} else {
			done, err = s.send(ctx, c)
		}
		if done {
			sent++
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("outbox message %s: %w", c.id, err))
		}
	}
	return sent, errors.Join(errs...)
}

// claimed is a row this relay holds.
type claimed struct {
	id, tenant, channel, recipient, body string
	// sender is the number the row is (or was) sent from; "" the
	// provider's default.
	sender string
	// template and fields: the row's template name and the values that
	// fill it; contentSid the approved template its last attempt sent
	// ("" for its text), content the template a fresh attempt sends.
	template, contentSid string
	fields               map[string]string
	content              *Template
	// key is the idempotency key of the activity that reserved the
	// message: the operation key its send span carries.
	key         string
	createdAt   time.Time
	acceptedAt  *time.Time // the booking's webhook, for message_sent
	attempted   bool
	attemptedAt time.Time
	attempts    int
	token       string
	// unreadable: the row's sealed text did not open (a key missing in
	// this process, a tampered row), or its recipient's consent could
	// not be read; it is left pending, untouched.
	unreadable error
	// expired: the row was reached after its send-by moment and is
	// recorded 'expired' instead of being sent; suppressed: its recipient
	// opted out of its kind, and it is recorded 'suppressed'.
	expired bool
}

// suppress records a never-attempted row whose recipient opted out of
// its kind as not sent, with the reason, and commits tx.
func (s *Sender) suppress(ctx context.Context, tx pgx.Tx, id, kind string) error {
	_, err := tx.Exec(ctx, `UPDATE outbox_messages
		SET state = 'suppressed', claimed_until = NULL, claim_token = NULL, updated_at = now(),
		    last_error = $2
		WHERE id = $1`, id, "not sent: the customer opted out of "+kind+" messages")
	if err == nil {
		err = tx.Commit(ctx)
	}
	if err != nil {
		return fmt.Errorf("suppress outbox message %s: %w", id, err)
	}
	s.log().Info("outbox message not sent: the customer opted out", "id", id, "kind", kind)
	return nil
}

// expire records a never-attempted row whose moment has passed as not
// sent, with the reason for the ops page, and commits tx. Sending it now
// would tell the customer something late (a reminder after the slot, a
// link that no longer works).
func (s *Sender) expire(ctx context.Context, tx pgx.Tx, id string, sendBy time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE outbox_messages
		SET state = 'expired', claimed_until = NULL, claim_token = NULL, updated_at = now(),
		    last_error = $2
		WHERE id = $1`, id, "not sent: its moment passed at "+sendBy.UTC().Format(time.RFC3339)+" before the relay reached it")
	if err == nil {
		err = tx.Commit(ctx)
	}
	if err != nil {
		return fmt.Errorf("expire outbox message %s: %w", id, err)
	}
	s.log().Warn("outbox message not sent: its moment passed", "id", id, "send_by", sendBy)
	return nil
}

// claim takes the oldest due row: never attempted, or attempted and past
// its claim. A never-attempted row is marked attempted here, committed
// before the provider is called.
func (s *Sender) claim(ctx context.Context, skip []string) (claimed, bool, error) {
	now := s.now()
	tx, err := s.Store.Pool.Begin(ctx)
	if err != nil {
		return claimed{}, false, fmt.Errorf("claim outbox message: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()

	var (
		c           claimed
		attemptedAt *time.Time
		sealed      []byte
		kind        string
	)
	var sendBy *time.Time
	var fields []byte
	err = tx.QueryRow(ctx, `SELECT id, tenant_id, channel, recipient, body, sealed, idempotency_key, created_at, attempted_at, attempts, accepted_at, send_by, kind,
		       coalesce(sender, ''), coalesce(template, ''), fields, coalesce(content_sid, '')
		FROM outbox_messages
		WHERE state = 'pending' AND channel = ANY($1)
		  AND (claimed_until IS NULL OR claimed_until <= $2)
		  AND id <> ALL($3)
		ORDER BY created_at, id
		LIMIT 1
		FOR UPDATE SKIP LOCKED`, relayChannels, now, skip).
		Scan(&c.id, &c.tenant, &c.channel, &c.recipient, &c.body, &sealed, &c.key, &c.createdAt, &attemptedAt, &c.attempts, &c.acceptedAt, &sendBy, &kind,
			&c.sender, &c.template, &fields, &c.contentSid)
	if errors.Is(err, pgx.ErrNoRows) {
		return claimed{}, false, nil
	}
	if err != nil {
		return claimed{}, false, fmt.Errorf("claim outbox message: %w", err)
	}
	if attemptedAt == nil && sendBy != nil && now.After(*sendBy) {
		return claimed{id: c.id, expired: true}, true, s.expire(ctx, tx, c.id, *sendBy)
	}
	if c.recipient, c.body, c.fields, err = s.Store.Open(c.id, c.recipient, c.body, fields, sealed); err != nil {
		// Never sent as garbage, never given up: the row waits, unclaimed,
		// until a relay with its key comes by; the other rows go on.
		return claimed{id: c.id, unreadable: err}, true, nil
	}
	if attemptedAt == nil && s.Suppress != nil {
		out, err := s.Suppress(ctx, c.tenant, kind, c.recipient)
		if err != nil {
			// Unknown consent is no licence to send: the row waits.
			return claimed{id: c.id, unreadable: fmt.Errorf("outbox message %s: consent: %w", c.id, err)}, true, nil
		}
		if out {
			return claimed{id: c.id, expired: true}, true, s.suppress(ctx, tx, c.id, kind)
		}
	}
	c.token = newToken()
	until := now.Add(s.timeout())
	if attemptedAt == nil {
		c.attemptedAt = now
		if s.From != nil && c.attempts == 0 {
			c.sender = s.From(c.tenant, c.channel) // a row sent again keeps its first sender
		}
		if c.content, err = s.asTemplate(ctx, c); err != nil {
			return claimed{id: c.id, unreadable: err}, true, nil
		}
		c.contentSid = ""
		if c.content != nil {
			c.contentSid = c.content.ContentSid
		}
		_, err = tx.Exec(ctx, `UPDATE outbox_messages
			SET attempted_at = $2, claimed_until = $3, claim_token = $4, attempts = attempts + 1, updated_at = now(), sender = nullif($5, ''),
			    content_sid = nullif($6, '')
			WHERE id = $1`, c.id, now, until, c.token, c.sender, c.contentSid)
	} else {
		c.attempted, c.attemptedAt = true, *attemptedAt
		_, err = tx.Exec(ctx, `UPDATE outbox_messages
			SET claimed_until = $2, claim_token = $3, updated_at = now()
			WHERE id = $1`, c.id, until, c.token)
	}
	if err != nil {
		return claimed{}, false, fmt.Errorf("claim outbox message %s: %w", c.id, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return claimed{}, false, fmt.Errorf("claim outbox message %s: %w", c.id, err)
	}
	return c, true, nil
}

// SpanSend is the name of the span of one call to the provider; it
// carries the reserving activity's operation key, so a trace search by
// that key finds the send next to the booking that reserved it.
const SpanSend = "outbox.send"

// send calls the provider for a row just marked attempted and records
// the outcome.
func (s *Sender) send(ctx context.Context, c claimed) (bool, error) {
	ctx, span := tracing.Start(ctx, SpanSend, tracing.Tenant.String(c.tenant), tracing.OperationKey.String(c.key))
	defer span.End()
	callback := ""
	if s.CallbackURL != nil {
		callback = s.CallbackURL(c.id)
	}
	sctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	sid, err := s.deliver(sctx, c, c.content, callback)
	cancel()
	if err == nil && sid == "" {
		err = errors.New("provider accepted the message without an ID")
	}
	if err != nil {
		span.SetStatus(codes.Error, outcome.Of(err).String())
	} else {
		span.SetAttributes(tracing.MessageSID.String(sid))
	}

	// The outcome is recorded even if the relay is being stopped.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer rcancel()
	switch class := outcome.Of(err); {
	case err == nil:
		if err := s.markSent(rctx, c, sid); err != nil {
			// Sent; the row stays attempted and reconciliation finds it.
			return false, fmt.Errorf("sent as %s, but not recorded: %w", sid, err)
		}
		if c.acceptedAt != nil {
			telemetry.ObservePhase(telemetry.BookingPhases, c.tenant, telemetry.PhaseMessageSent, *c.acceptedAt, s.now())
		}
		return true, nil
	case class == outcome.Final:
		s.log().Warn("outbox message refused by the provider", "id", c.id, "err", redact(err))
		return false, s.release(rctx, c, `state = 'failed', claimed_until = NULL`, err)
	case class == outcome.Retryable:
		s.log().Info("outbox message not taken by the provider; retried later", "id", c.id, "err", redact(err))
		return false, s.release(rctx, c, `attempted_at = NULL, claimed_until = NULL`, err)
	default:
		// Unknown: keep attempted_at and the claim; reconciliation looks
		// the message up once the claim has expired.
		s.log().Warn("outbox message outcome unknown; reconciled later", "id", c.id, "err", redact(err))
		return false, s.release(rctx, c, `claimed_until = claimed_until`, err)
	}
}

// markSent stores the provider's ID. A known ID is the truth whoever
// holds the claim; a status callback may have been faster ('delivered',
// 'failed'), and its state is kept.
func (s *Sender) markSent(ctx context.Context, c claimed, sid string) error {
	_, err := s.Store.Pool.Exec(ctx, `UPDATE outbox_messages
		SET state = CASE WHEN state IN ('pending', 'review') THEN 'sent' ELSE state END,
		    provider_id = coalesce(provider_id, $2),
		    claimed_until = NULL, claim_token = NULL, last_error = NULL, updated_at = now()
		WHERE id = $1`, c.id, sid)
	return err
}

// release ends this relay's claim with set, recording cause, if the
// claim is still this relay's and the row still pending. The cause is
// stored masked: provider errors repeat the To number, and last_error is
// for people (the ops page), who see it masked anyway.
func (s *Sender) release(ctx context.Context, c claimed, set string, cause error) error {
	_, err := s.Store.Pool.Exec(ctx, `UPDATE outbox_messages
		SET `+set+`, claim_token = NULL, last_error = $3, updated_at = now()
		WHERE id = $1 AND claim_token = $2 AND state = 'pending'`, c.id, c.token, mask.Phones(cause.Error()))
	if err != nil {
		return fmt.Errorf("record outcome (%v): %w", cause, err)
	}
	return nil
}

func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// redact masks phone numbers in err (provider errors repeat the To
// number), so log lines never carry a customer's number.
func redact(err error) string {
	return mask.Phones(err.Error())
}

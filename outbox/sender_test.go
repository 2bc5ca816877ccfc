package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/twilio"
)

const (
	from        = "+4930123456"
	customer    = "+4915112345678"
	sendTimeout = time.Minute
)

// env is a relay over a fresh database, sending with the production
// twilio Client to a FakeServer over loopback.
type env struct {
	t     *testing.T
	store *outbox.Store
	fake  *twilio.FakeServer
	mu    sync.Mutex
	clock time.Time
}

func setup(t *testing.T) *env {
	t.Helper()
	fake := twilio.NewFakeServer()
	t.Cleanup(fake.Close)
	return &env{t: t, store: &outbox.Store{Pool: testsupport.Database(t)}, fake: fake, clock: time.Now().UTC()}
}

func (e *env) now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clock
}

// advance moves the relays' clock.
func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clock = e.clock.Add(d)
}

func (e *env) relay() *outbox.Sender {
	return &outbox.Sender{
		Store:       e.store,
		Provider:    twilio.New(e.fake.AccountSID, e.fake.AuthToken, from, twilio.WithBaseURL(e.fake.URL())),
		SendTimeout: sendTimeout,
		CallbackURL: outbox.StatusCallback("https://bookonce.example/", "/webhooks/twilio/status"),
		Now:         e.now,
		Log:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func (e *env) reserve(ref, channel, recipient, body string) outbox.Message {
	e.t.Helper()
	m, err := e.store.Reserve(context.Background(), "key-"+ref, outbox.Message{
		Tenant: "tenant-1", Reference: ref, Kind: "confirmation", Channel: channel, Recipient: recipient, Body: body,
	})
	require.NoError(e.t, err)
	return m
}

type row struct {
	State      string
	ProviderID string
	Attempted  bool
	Attempts   int
	LastError  string
}

func (e *env) row(id string) row {
	e.t.Helper()
	var r row
	require.NoError(e.t, e.store.Pool.QueryRow(context.Background(),
		`SELECT state, coalesce(provider_id, ''), attempted_at IS NOT NULL, attempts, coalesce(last_error, '')
		 FROM outbox_messages WHERE id = $1`, id).Scan(&r.State, &r.ProviderID, &r.Attempted, &r.Attempts, &r.LastError))
	return r
}

func (e *env) runOnce(s *outbox.Sender) int {
	e.t.Helper()
	n, err := s.RunOnce(context.Background())
	require.NoError(e.t, err)
	return n
}

func TestSendsOnceWithSID(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	wa := e.reserve("bk_1", "whatsapp", customer, "Ihr Termin am Dienstag um 14 Uhr ist bestätigt.")
	sms := e.reserve("bk_2", "voice", "+4915199990000", "Ihr Termin am Mittwoch um 9 Uhr ist bestätigt.")

	require.Equal(t, 2, e.runOnce(s))

	msgs := e.fake.Messages()
	require.Len(t, msgs, 2)
	bySID := map[string]twilio.FakeMessage{msgs[0].Sid: msgs[0], msgs[1].Sid: msgs[1]}

	got := e.row(wa.ID)
	require.Equal(t, "sent", got.State)
	require.Equal(t, 1, got.Attempts)
	require.Empty(t, got.LastError)
	m := bySID[got.ProviderID]
	require.Equal(t, "whatsapp:"+customer, m.To)
	require.Equal(t, "whatsapp:"+from, m.From)
	require.Equal(t, wa.Body, m.Body)
	require.Equal(t, "https://bookonce.example/webhooks/twilio/status?outbox_id="+wa.ID, m.StatusCallback)

	got = e.row(sms.ID)
	require.Equal(t, "sent", got.State)
	m = bySID[got.ProviderID]
	require.Equal(t, "+4915199990000", m.To, "a caller gets an SMS to the plain number")
	require.Equal(t, from, m.From)

	// Running again, now or long after, sends nothing more.
	require.Equal(t, 0, e.runOnce(s))
	e.advance(10 * sendTimeout)
	require.Equal(t, 0, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 2)
}

// TestMatrix06OutboxRelaySendsTwice proves failure-matrix item 6 (the
// outbox relay sends one confirmation twice): three relays run over the
// same 30 reserved confirmations at once, and again after their claims
// expired. At the fake Twilio each confirmation arrives exactly once, and
// each outbox row names its own message.
func TestMatrix06OutboxRelaySendsTwice(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const n = 30
	ids := make([]string, n)
	for i := range n {
		ids[i] = e.reserve(fmt.Sprintf("bk_%02d", i), "whatsapp", customer, fmt.Sprintf("Bestätigung %02d", i)).ID
	}

	relays := []*outbox.Sender{e.relay(), e.relay(), e.relay()}
	start := make(chan struct{})
	var g errgroup.Group
	var mu sync.Mutex
	total := 0
	for _, r := range relays {
		g.Go(func() error {
			<-start
			k, err := r.RunOnce(context.Background())
			mu.Lock()
			total += k
			mu.Unlock()
			return err
		})
	}
	close(start)
	require.NoError(t, g.Wait())
	require.Equal(t, n, total)

	msgs := e.fake.Messages()
	require.Len(t, msgs, n)
	bodies, sids := map[string]int{}, map[string]bool{}
	for _, m := range msgs {
		bodies[m.Body]++
		sids[m.Sid] = true
	}
	for i := range n {
		require.Equal(t, 1, bodies[fmt.Sprintf("Bestätigung %02d", i)])
		got := e.row(ids[i])
		require.Equal(t, "sent", got.State)
		require.True(t, sids[got.ProviderID], "the row names its message at Twilio")
		delete(sids, got.ProviderID) // and no other row names the same one
	}

	// And once more, all at the same time, after the claims expired.
	e.advance(2 * sendTimeout)
	for _, r := range relays {
		g.Go(func() error { _, err := r.RunOnce(context.Background()); return err })
	}
	require.NoError(t, g.Wait())
	require.Len(t, e.fake.Messages(), n)
}

func TestLostResponseIsReconciledNotResent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	m := e.reserve("bk_1", "whatsapp", customer, "Ihr Termin am Dienstag um 14 Uhr ist bestätigt.")

	// Twilio commits the message; the answer never arrives.
	e.fake.DropNextResponse()
	require.Equal(t, 0, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 1)
	got := e.row(m.ID)
	require.Equal(t, "pending", got.State)
	require.True(t, got.Attempted)
	require.Empty(t, got.ProviderID)
	require.Contains(t, got.LastError, "unknown outcome")

	// Within the send timeout nobody touches it, and a second relay does
	// not send it either.
	e.advance(sendTimeout - time.Second)
	require.Equal(t, 0, e.runOnce(s))
	require.Equal(t, 0, e.runOnce(e.relay()))
	require.Len(t, e.fake.Messages(), 1)

	// Past it, the relay looks the message up instead of sending again.
	e.advance(2 * time.Second)
	require.Equal(t, 1, e.runOnce(s))
	msgs := e.fake.Messages()
	require.Len(t, msgs, 1, "exactly one message at Twilio")
	got = e.row(m.ID)
	require.Equal(t, "sent", got.State)
	require.Equal(t, msgs[0].Sid, got.ProviderID)
	require.Equal(t, 1, got.Attempts)

	e.advance(10 * sendTimeout)
	require.Equal(t, 0, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 1)
}

// lagging is a Provider whose list may lag behind its sends: "not found"
// proves nothing there.
type lagging struct{ outbox.Provider }

func (e *env) laggingRelay() *outbox.Sender {
	s := e.relay()
	s.Provider = lagging{s.Provider}
	return s
}

func TestAttemptedButNotFoundIsSentAgainOnlyWhereTheListIsAuthoritative(t *testing.T) {
	t.Parallel()
	t.Run("5xx with nothing created: sent again once, found by the list", func(t *testing.T) {
		e := setup(t)
		s := e.relay()
		m := e.reserve("bk_1", "whatsapp", customer, "Bestätigung")

		// A 500 may or may not have created the message: unknown.
		e.fake.FailNext(http.StatusInternalServerError)
		require.Equal(t, 0, e.runOnce(s))
		require.Equal(t, "pending", e.row(m.ID).State)
		require.True(t, e.row(m.ID).Attempted)

		// Twilio's list is authoritative: absent means never created.
		e.advance(sendTimeout + time.Second)
		require.Equal(t, 0, e.runOnce(s), "the reconciliation releases the row")
		require.Equal(t, 1, e.runOnce(s), "the next run sends it")
		got := e.row(m.ID)
		require.Equal(t, "sent", got.State)
		require.Equal(t, 2, got.Attempts)
		require.Len(t, e.fake.Messages(), 1)
		require.Equal(t, e.fake.Messages()[0].Sid, got.ProviderID)

		e.advance(10 * sendTimeout)
		require.Equal(t, 0, e.runOnce(s))
		require.Len(t, e.fake.Messages(), 1)
	})
	t.Run("never found after every send: review", func(t *testing.T) {
		e := setup(t)
		s := e.relay()
		m := e.reserve("bk_1", "whatsapp", customer, "Bestätigung")
		for range 3 {
			e.fake.FailNext(http.StatusInternalServerError)
			require.Equal(t, 0, e.runOnce(s), "the send")
			e.advance(sendTimeout + time.Second)
			require.Equal(t, 0, e.runOnce(s), "the reconciliation")
		}
		got := e.row(m.ID)
		require.Equal(t, "review", got.State)
		require.Equal(t, 3, got.Attempts)
		require.Empty(t, e.fake.Messages())
	})
	t.Run("a list that may lag: review, never re-sent", func(t *testing.T) {
		e := setup(t)
		s := e.laggingRelay()
		m := e.reserve("bk_1", "whatsapp", customer, "Bestätigung")
		e.fake.FailNext(http.StatusInternalServerError)
		require.Equal(t, 0, e.runOnce(s))

		e.advance(sendTimeout + time.Second)
		require.Equal(t, 0, e.runOnce(s))
		got := e.row(m.ID)
		require.Equal(t, "review", got.State)
		require.Empty(t, got.ProviderID)
		require.Contains(t, got.LastError, "no matching message")
		require.Empty(t, e.fake.Messages())

		e.advance(10 * sendTimeout)
		require.Equal(t, 0, e.runOnce(s))
		require.Empty(t, e.fake.Messages(), "review is never re-sent automatically")
	})
	t.Run("relay died after marking attempted: sent once", func(t *testing.T) {
		e := setup(t)
		s := e.relay()
		m := e.reserve("bk_1", "sms", customer, "Bestätigung")
		now := e.now()
		_, err := e.store.Pool.Exec(context.Background(), `UPDATE outbox_messages
			SET attempted_at = $2, claimed_until = $3, claim_token = 'dead-relay', attempts = 1 WHERE id = $1`,
			m.ID, now, now.Add(sendTimeout))
		require.NoError(t, err)

		require.Equal(t, 0, e.runOnce(s))
		require.Equal(t, "pending", e.row(m.ID).State, "claimed by the dead relay until its timeout")

		e.advance(sendTimeout)
		require.Equal(t, 0, e.runOnce(s))
		require.Equal(t, 1, e.runOnce(s))
		require.Equal(t, "sent", e.row(m.ID).State)
		require.Len(t, e.fake.Messages(), 1)
	})
	t.Run("lookup fails: still unknown, looked up again", func(t *testing.T) {
		e := setup(t)
		s := e.relay()
		m := e.reserve("bk_1", "whatsapp", customer, "Bestätigung")
		e.fake.DropNextResponse()
		require.Equal(t, 0, e.runOnce(s))
		e.advance(sendTimeout)

		e.fake.FailNext(http.StatusServiceUnavailable)
		n, err := s.RunOnce(context.Background())
		require.Error(t, err)
		require.Equal(t, 0, n)
		require.Equal(t, "pending", e.row(m.ID).State)

		require.Equal(t, 1, e.runOnce(s))
		require.Equal(t, "sent", e.row(m.ID).State)
		require.Len(t, e.fake.Messages(), 1)
	})
}

// TestUnsubscribedRecipientIsFinal: a customer who texted STOP to the
// shop's number is refused by Twilio with error 21610 on every SMS from
// it. The relay takes that as final: the row ends 'failed' after one
// send and is never sent again, under this key or another.
func TestUnsubscribedRecipientIsFinal(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	const customer = "+4915112345678"
	e.fake.Inbound(customer, from, "STOP")
	m := e.reserve("bk_1", "sms", customer, "Erinnerung")

	require.Equal(t, 0, e.runOnce(s))
	got := e.row(m.ID)
	require.Equal(t, "failed", got.State)
	require.Contains(t, got.LastError, "21610")
	e.advance(10 * sendTimeout)
	require.Equal(t, 0, e.runOnce(s))
	require.Equal(t, "failed", e.row(m.ID).State)
	for _, msg := range e.fake.Messages() {
		require.NotEqual(t, "Erinnerung", msg.Body, "nothing of ours reached the customer who opted out")
	}
	require.Len(t, e.fake.Messages(), 1, "only Twilio's own answer to the STOP")
}

func TestFinalErrorFails(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	m := e.reserve("bk_1", "sms", "+123", "Bestätigung")

	require.Equal(t, 0, e.runOnce(s))
	got := e.row(m.ID)
	require.Equal(t, "failed", got.State)
	require.Contains(t, got.LastError, "21211")
	require.Empty(t, e.fake.Messages())

	e.advance(10 * sendTimeout)
	require.Equal(t, 0, e.runOnce(s))
	require.Equal(t, "failed", e.row(m.ID).State)
	require.Empty(t, e.fake.Messages())
}

func TestRetryableErrorIsSentLater(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	m := e.reserve("bk_1", "whatsapp", customer, "Bestätigung")

	e.fake.FailNext(http.StatusTooManyRequests)
	require.Equal(t, 0, e.runOnce(s))
	got := e.row(m.ID)
	require.Equal(t, "pending", got.State)
	require.False(t, got.Attempted, "nothing reached Twilio: not an unknown outcome")
	require.Contains(t, got.LastError, "429")
	require.Empty(t, e.fake.Messages())

	require.Equal(t, 1, e.runOnce(s))
	got = e.row(m.ID)
	require.Equal(t, "sent", got.State)
	require.Equal(t, 2, got.Attempts)
	require.Len(t, e.fake.Messages(), 1)
}

func TestRedactMasksPhoneNumbers(t *testing.T) {
	got := outbox.Redact(errors.New("The 'To' number whatsapp:+4915112345678 is not a valid phone number"))
	require.NotContains(t, got, "4915112345678")
	require.Contains(t, got, "whatsapp:+49·········78")
}

// TestSuppressedRowIsNeverSent: a reminder whose recipient opted out is
// recorded 'suppressed' with the reason, not sent, then or later; while
// the consent cannot be read the row waits, unsent and unattempted; a
// row the rule does not hold back goes out.
func TestSuppressedRowIsNeverSent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	var readErr error
	s.Suppress = func(_ context.Context, tenant, kind, recipient string) (bool, error) {
		require.Equal(t, "tenant-1", tenant)
		require.Equal(t, customer, recipient, "the recipient in clear")
		return kind == "reminder_24h", readErr
	}
	reminder, err := e.store.Reserve(context.Background(), "key-r", outbox.Message{
		Tenant: "tenant-1", Reference: "bk_1", Kind: "reminder_24h", Channel: "whatsapp", Recipient: customer, Body: "Erinnerung"})
	require.NoError(t, err)
	readErr = errors.New("consent store down")
	_, err = s.RunOnce(context.Background())
	require.ErrorContains(t, err, "consent store down")
	require.Equal(t, row{State: "pending"}, e.row(reminder.ID), "unknown consent is no licence to send")

	readErr = nil
	confirmation := e.reserve("bk_1", "whatsapp", customer, "Ihr Termin ist bestätigt")
	require.Equal(t, 1, e.runOnce(s))
	got := e.row(reminder.ID)
	require.Equal(t, "suppressed", got.State)
	require.False(t, got.Attempted)
	require.Contains(t, got.LastError, "opted out of reminder_24h")
	require.Equal(t, "sent", e.row(confirmation.ID).State)
	e.advance(10 * sendTimeout)
	require.Equal(t, 0, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 1, "only the confirmation reached the customer")
}

// TestMessageLeavesFromItsTenantsNumberAndIsReconciledThere: a tenant's
// message is sent from the tenant's number. When the answer is lost and
// the shop's number changes meanwhile, the relay looks the message up
// between the numbers it was sent between, finds it, and sends nothing
// again: looking from the new number would find nothing and send twice.
func TestMessageLeavesFromItsTenantsNumberAndIsReconciledThere(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	shopNumber := "+4940111111"
	s.From = func(tenant, _ string) string {
		require.Equal(t, "tenant-1", tenant)
		return shopNumber
	}
	m := e.reserve("bk_1", "whatsapp", customer, "Ihr Termin am Dienstag um 14 Uhr ist bestätigt.")
	e.fake.DropNextResponse()
	require.Equal(t, 0, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 1)
	require.Equal(t, "whatsapp:+4940111111", e.fake.Messages()[0].From)

	shopNumber = "+4940999999" // the shop moved to another number
	e.advance(sendTimeout + time.Second)
	require.Equal(t, 1, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 1, "found where it was sent, not sent again")
	require.Equal(t, "sent", e.row(m.ID).State)

	later := e.reserve("bk_2", "sms", customer, "Erinnerung")
	require.Equal(t, 1, e.runOnce(s))
	require.Equal(t, "+4940999999", e.fake.Messages()[1].From, "a new message from the new number")
	require.Equal(t, "sent", e.row(later.ID).State)
}

// TestEachChannelLeavesFromItsSender: a shop whose WhatsApp sender and
// SMS number differ (tenants.yaml senders) sends WhatsApp from the one
// and SMS (a caller's answers) from the other; the fake keeps each
// customer's window per sender, so the WhatsApp message reaches the
// customer only from the number they wrote to.
func TestEachChannelLeavesFromItsSender(t *testing.T) {
	t.Parallel()
	e := setup(t)
	shop := tenants.Tenant{ID: "tenant-1", Numbers: []string{"+4940111111", "+4940222222"},
		Senders: tenants.Senders{WhatsApp: "+4940222222", SMS: "+4940111111"}}
	s := e.relay()
	s.From = func(_, channel string) string { return shop.SenderFor(channel) }
	e.fake.Inbound("whatsapp:"+customer, "whatsapp:+4940222222", "Hallo")
	e.reserve("bk_1", "whatsapp", customer, "Ihr Termin ist bestätigt.")
	e.reserve("bk_2", "voice", "+4915199990000", "Ihr Termin ist bestätigt.")
	require.Equal(t, 2, e.runOnce(s))
	from := map[string]string{}
	for _, m := range e.fake.Messages() {
		require.Equal(t, "sent", m.Status, "it reached %s", m.To)
		from[m.To] = m.From
	}
	require.Equal(t, map[string]string{"whatsapp:" + customer: "whatsapp:+4940222222", "+4915199990000": "+4940111111"}, from)
}

package outbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bookonce/bookonce/internal/telemetry"
)

// reconcile settles a row whose send attempt has an unknown outcome (a
// lost response, a timeout, a relay that died after marking it
// attempted). It never sends: it asks the provider whether the message
// exists. Found: the row gets the provider's ID and is 'sent'. Not found,
// from a provider whose list is authoritative (AuthoritativeLister): the
// attempt's call ended at least half a SendTimeout ago, so nothing exists
// and the row is released for another send, up to maxSends. Otherwise
// 'review': the message may still surface or never have left, and only a
// person may decide to send it again.
func (s *Sender) reconcile(ctx context.Context, c claimed) (bool, error) {
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer rcancel()
	body, ok := s.sentBody(c)
	if !ok {
		s.log().Warn("outbox message sent as a template that is no longer configured; needs review", "id", c.id, "content_sid", c.contentSid)
		return false, s.release(rctx, c, `state = 'review', claimed_until = NULL`,
			fmt.Errorf("attempted at %s as template %s with unknown outcome; the template's text is no longer configured, so the lookup cannot match it",
				c.attemptedAt.UTC().Format(time.RFC3339), c.contentSid))
	}
	fctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	sids, err := s.Provider.FindSent(fctx, c.sender, address(c.channel, c.recipient), body, c.createdAt)
	cancel()

	if err != nil {
		// Still unknown; the next run looks again.
		if rerr := s.release(rctx, c, `claimed_until = NULL`, fmt.Errorf("reconciliation lookup failed: %w", err)); rerr != nil {
			return false, errors.Join(err, rerr)
		}
		return false, fmt.Errorf("reconciliation lookup failed: %w", err)
	}
	sid, err := s.unrecorded(rctx, c, sids)
	if err != nil {
		return false, err
	}
	found := sid != ""
	if !found && authoritative(s.Provider) && c.attempts < maxSends {
		s.log().Info("outbox message attempted but absent from the provider's authoritative list; sent again",
			"id", c.id, "attempted_at", c.attemptedAt, "attempts", c.attempts)
		return false, s.release(rctx, c, `attempted_at = NULL, claimed_until = NULL`,
			fmt.Errorf("attempt %d at %s had an unknown outcome and is not at the provider: sent again",
				c.attempts, c.attemptedAt.UTC().Format(time.RFC3339)))
	}
	if !found {
		s.log().Warn("outbox message attempted but not found at the provider; needs review",
			"id", c.id, "attempted_at", c.attemptedAt)
		return false, s.release(rctx, c, `state = 'review', claimed_until = NULL`,
			fmt.Errorf("attempted at %s with unknown outcome; no matching message at the provider since %s",
				c.attemptedAt.UTC().Format(time.RFC3339), c.createdAt.UTC().Format(time.RFC3339)))
	}
	err = s.markSent(rctx, c, sid)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		// The message found is already another row's (the same text to the
		// same number twice): which one this row's attempt produced is
		// unknowable here.
		s.log().Warn("outbox message matches a provider message of another row; needs review", "id", c.id, "provider_id", sid)
		return false, s.release(rctx, c, `state = 'review', claimed_until = NULL`,
			fmt.Errorf("the matching provider message %s is recorded for another outbox message", sid))
	}
	if err != nil {
		return false, fmt.Errorf("found as %s, but not recorded: %w", sid, err)
	}
	s.log().Info("outbox message reconciled as sent", "id", c.id, "provider_id", sid)
	telemetry.DuplicatesBlocked.WithLabelValues(telemetry.LayerOutbox, c.tenant, RouteReconcile).Inc()
	return true, nil
}

// unrecorded returns the earliest of sids that no other row holds: the
// same text to the same number may have gone out for another row minutes
// before (the lookup reaches back by the provider's clock skew), and that
// message is not this row's.
func (s *Sender) unrecorded(ctx context.Context, c claimed, sids []string) (string, error) {
	if len(sids) == 0 {
		return "", nil
	}
	rows, err := s.Store.Pool.Query(ctx, `SELECT provider_id FROM outbox_messages
		WHERE provider_id = ANY($1) AND id <> $2`, sids, c.id)
	if err != nil {
		return "", fmt.Errorf("reconcile outbox message %s: %w", c.id, err)
	}
	taken, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("reconcile outbox message %s: %w", c.id, err)
	}
	for _, sid := range sids {
		if !slices.Contains(taken, sid) {
			return sid, nil
		}
	}
	return "", nil
}

// authoritative reports whether p's FindSent proves absence.
func authoritative(p Provider) bool {
	l, ok := p.(AuthoritativeLister)
	return ok && l.AuthoritativeListing()
}

package agent

import (
	"context"
	"fmt"
	"time"
)

// ReapOperations deletes claimed operations older than the operation IDs'
// lifetime (Signer.TTL): an ID that old is refused as expired anyway, so
// its claim decides nothing any more. It returns how many it deleted.
func (s *Service) ReapOperations(ctx context.Context) (int64, error) {
	if s.Signer.TTL <= 0 {
		return 0, nil
	}
	tag, err := s.Pool.Exec(ctx, `DELETE FROM agent_operations WHERE created_at < $1`, s.now().Add(-s.Signer.TTL))
	if err != nil {
		return 0, fmt.Errorf("reap agent operations: %w", err)
	}
	return tag.RowsAffected(), nil
}

// RunReaper calls ReapOperations at once and then every interval until
// ctx ends; a failure is logged and tried again at the next tick.
func (s *Service) RunReaper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.ReapOperations(ctx); err != nil && ctx.Err() == nil {
			s.Logger.Warn("agent operations not reaped", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

package idempotency

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// session is one request's connection, from the claim to the end of the
// handler's transaction. Statements that need no answer in between travel
// together (pgx batches: one round trip each), so the middleware costs the
// same round trips as a handler's own transaction: BEGIN + claim + COMMIT
// + BEGIN in one, the handler's statements, then the stored response +
// COMMIT in one.
type session struct {
	mu    sync.Mutex
	pc    *pgxpool.Conn
	tx    pgx.Tx // the open transaction on pc, as pgx sees it
	ended bool
}

// openSession acquires a connection and sends, in one round trip, BEGIN
// followed by queue's statements. read reads their results in order (the
// BEGIN's is read already). On error the session is ended.
func openSession(ctx context.Context, pool *pgxpool.Pool, queue func(*pgx.Batch), read func(pgx.BatchResults) error) (*session, error) {
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire connection: %w", err)
	}
	var b pgx.Batch
	b.BeginTx(pgx.TxOptions{})
	queue(&b)
	br := pc.Conn().SendBatch(ctx, &b)
	sess := &session{pc: pc, tx: br.Tx()}
	if _, err = br.Exec(); err == nil {
		err = read(br)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		sess.rollback(ctx)
		return nil, err
	}
	return sess, nil
}

// send runs statements in the open transaction in one round trip; read
// reads their results in order. On error the session is ended.
func (s *session) send(ctx context.Context, queue func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	var b pgx.Batch
	queue(&b)
	br := s.tx.SendBatch(ctx, &b)
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.rollback(ctx)
	}
	return err
}

// commitAndBegin commits the open transaction and begins the next one,
// in one round trip.
func (s *session) commitAndBegin(ctx context.Context) error {
	return s.send(ctx, func(b *pgx.Batch) { b.Queue("commit"); b.Queue("begin") }, execAll(2))
}

// finish runs sql (if any; its errors abort the transaction) and COMMIT
// in one round trip, and returns the connection to the pool. pgx's Tx
// object is left behind unaware that the transaction ended: the session's
// ended flag keeps it from ever being used again.
func (s *session) finish(ctx context.Context, sql string, args ...any) error {
	n := 1
	err := s.send(ctx, func(b *pgx.Batch) {
		if sql != "" {
			b.Queue(sql, args...)
			n = 2
		}
		b.Queue("commit")
	}, func(br pgx.BatchResults) error { return execAll(n)(br) })
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	s.pc.Release() // the connection is idle again: back to the pool
	return nil
}

// rollback ends the transaction and returns the connection; a no-op once
// the session has ended.
func (s *session) rollback(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	_ = s.tx.Rollback(ctx) // a failure closes the connection; Release then drops it
	s.pc.Release()
}

// live returns the open transaction, or ErrTxClosed once the session ended.
func (s *session) live() (pgx.Tx, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil, pgx.ErrTxClosed
	}
	return s.tx, nil
}

// execAll reads n results.
func execAll(n int) func(pgx.BatchResults) error {
	return func(br pgx.BatchResults) error {
		for range n {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	}
}

// raised reports whether err is the error a statement raised on purpose
// with marker: plain SQL has no RAISE, so such statements cast a text
// starting with the marker to integer, and PostgreSQL reports it as
// invalid input for type integer, quoting the text.
func raised(err error, marker string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "22P02" && strings.Contains(pgErr.Message, marker)
}

// handlerTx is the transaction handed to handlers. The middleware alone
// ends it, after storing the response: a handler that committed on its
// own would persist an effect without its key record, and one that rolled
// back would make the stored response lie. Once the request has ended it
// refuses every use (pgx.ErrTxClosed): its connection is back in the pool.
type handlerTx struct{ s *session }

var _ pgx.Tx = handlerTx{}

// Commit does nothing: the middleware commits.
func (handlerTx) Commit(context.Context) error { return nil }

// Rollback does nothing: answer with a 4xx or 5xx status to discard the
// transaction. This also keeps a habitual `defer tx.Rollback(ctx)` harmless.
func (handlerTx) Rollback(context.Context) error { return nil }

// Begin starts a savepoint (a pseudo nested transaction), guarded like
// the transaction itself.
func (h handlerTx) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := h.s.live()
	if err != nil {
		return nil, err
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return savepoint{Tx: sp, s: h.s}, nil
}

// Exec implements pgx.Tx.
func (h handlerTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tx, err := h.s.live()
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return tx.Exec(ctx, sql, args...)
}

// Query implements pgx.Tx.
func (h handlerTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	tx, err := h.s.live()
	if err != nil {
		return nil, err
	}
	return tx.Query(ctx, sql, args...)
}

// QueryRow implements pgx.Tx.
func (h handlerTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	tx, err := h.s.live()
	if err != nil {
		return errRow{err}
	}
	return tx.QueryRow(ctx, sql, args...)
}

// SendBatch implements pgx.Tx.
func (h handlerTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	tx, err := h.s.live()
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	return tx.SendBatch(ctx, b)
}

// CopyFrom implements pgx.Tx.
func (h handlerTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	tx, err := h.s.live()
	if err != nil {
		return 0, err
	}
	return tx.CopyFrom(ctx, table, columns, src)
}

// Prepare implements pgx.Tx.
func (h handlerTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	tx, err := h.s.live()
	if err != nil {
		return nil, err
	}
	return tx.Prepare(ctx, name, sql)
}

// LargeObjects implements pgx.Tx. It is not guarded: use it only while
// the handler runs.
func (h handlerTx) LargeObjects() pgx.LargeObjects { return h.s.tx.LargeObjects() }

// Conn implements pgx.Tx; nil once the request has ended.
func (h handlerTx) Conn() *pgx.Conn {
	tx, err := h.s.live()
	if err != nil {
		return nil
	}
	return tx.Conn()
}

// savepoint is a handler's nested transaction, refused like handlerTx once
// the request has ended.
type savepoint struct {
	pgx.Tx
	s *session
}

// Exec implements pgx.Tx.
func (p savepoint) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if _, err := p.s.live(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return p.Tx.Exec(ctx, sql, args...)
}

// Query implements pgx.Tx.
func (p savepoint) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if _, err := p.s.live(); err != nil {
		return nil, err
	}
	return p.Tx.Query(ctx, sql, args...)
}

// QueryRow implements pgx.Tx.
func (p savepoint) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if _, err := p.s.live(); err != nil {
		return errRow{err}
	}
	return p.Tx.QueryRow(ctx, sql, args...)
}

// Commit releases the savepoint.
func (p savepoint) Commit(ctx context.Context) error {
	if _, err := p.s.live(); err != nil {
		return err
	}
	return p.Tx.Commit(ctx)
}

// Rollback rolls back to the savepoint.
func (p savepoint) Rollback(ctx context.Context) error {
	if _, err := p.s.live(); err != nil {
		return err
	}
	return p.Tx.Rollback(ctx)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// Package idempotency implements the Idempotency-Key contract of every
// mutating bookonce route: the calendar API (JSON bodies) and the
// Stripe-compatible payment API (form bodies). It follows Stripe and
// draft-ietf-httpapi-idempotency-key-header, and is stricter where they
// differ.
//
// A key identifies one business operation (design rule 1), never one HTTP
// attempt. It is scoped by tenant and operation (rule 2): the same key under
// another tenant or route is another key. PostgreSQL is the only store.
//
// # Flow
//
//  1. Validate: the Idempotency-Key header is required, 1-255 bytes of
//     printable ASCII without spaces. The body is read (at most 1 MiB),
//     fingerprinted (see Fingerprint) and handed on to the handler.
//  2. Claim: one short transaction inserts the key as pending with a random
//     owner token and a lease (INSERT ... ON CONFLICT; never check-then-
//     insert) and commits, so concurrent retries see it at once. It commits
//     asynchronously (no wait for its WAL flush): a claim lost in a crash is
//     a released claim, because the completion below commits durably and
//     its flush covers the claim.
//  3. Run: the handler runs with a transaction of its own (Tx) and a
//     buffered response writer. Its effect and the stored response commit
//     together, in that transaction, conditional on the owner token; if the
//     lease was taken over meanwhile, the effect is rolled back (fencing).
//
// Round trips: the claim's transaction and the BEGIN of the handler's go
// to PostgreSQL together, and so do the stored response and the COMMIT,
// so a request costs the round trips of the handler's own transaction.
//
// # Answers
//
//	400 idempotency_key_missing / idempotency_key_invalid: bad header
//	400 malformed_body: a JSON or form body that does not parse
//	413 payload_too_large: body over 1 MiB
//	401 unauthenticated: no tenant in the context (BearerAuth missing)
//	409 idempotency_key_in_flight + Retry-After: the first request with
//	    this key still runs (or a late holder was fenced); in Stripe's
//	    style idempotency_key_in_use, Stripe's code
//	422 idempotency_key_reused: same key, other payload; nothing runs
//	    (400 with ProblemStyle StripeJSON, Stripe's status)
//	429 rate_limited + Retry-After: tenant's quota of new keys per minute
//	    (rate_limit in Stripe's style)
//	stored status and byte-identical body + Idempotent-Replayed: true: the
//	    key completed before; the handler does not run
//	500 internal: the stored response is sealed and does not open (its
//	    payload key is not configured, or the row was tampered with)
//
// With Options.Sealer (the payload keys) the stored body is sealed at rest,
// bound to its key's row; rows stored in clear before still replay.
//
// Which answers are stored: 2xx and 3xx, and any 4xx the handler marks with
// Keep (a decided outcome such as slot_unavailable or card_declined). Other
// 4xx and every 5xx roll the transaction back and release the key, so a
// corrected or later retry runs anew. A handler panic does the same and the
// panic continues to the server.
//
// With ProblemStyle StripeJSON the same statuses carry Stripe's error shape
// {"error":{"type":"idempotency_error","code":...,"message":...}}.
//
// Keys are kept for Options.TTL (default 72h) from their creation; an
// expired key is new again, and the business constraints downstream remain
// the last line against a second effect (rule 11). Reap and RunReaper delete
// expired keys in small batches. A pending key whose lease has ended is taken
// over by the next retry (counted in bookonce_idempotency_lease_takeovers_total).
//
// Times come from Options.Now (the process clock), not from the database,
// so processes sharing a database need synchronised clocks (NTP); the lease
// should exceed the worst-case handler time plus clock skew.
package idempotency

package bench

// whereTimeGoes explains the tables from the structure of each path and
// the profiles below. It cites no figure of a particular run (the tables
// do), except where it says where a figure comes from.
const whereTimeGoes = "### 1 and 2: the idempotency layer\n\n" +
	"On two cores shared by PostgreSQL, this process and other engineers' builds, a request's cost is mostly its " +
	"round trips (each wakes a PostgreSQL backend and a goroutine, and waits for a core) and its commits that wait " +
	"for their WAL flush (an fdatasync; `pg_test_fsync` on this disk measured about 1.2 ms per flush, once, outside " +
	"the benchmark). The last full run before this change (docs/benchmarks.md of commit 77cecd8) added 3.6 ms at p95 (c=1) and reached " +
	"0.53 of the floor, with this shape per request:\n\n" +
	"| | before | now |\n|---|---|---|\n" +
	"| claim | BEGIN · INSERT … ON CONFLICT … RETURNING · COMMIT: 3 round trips, 1 flush | [BEGIN · claim · COMMIT · BEGIN]: 1 round trip, no flush wait |\n" +
	"| handler | BEGIN · handler · UPDATE · COMMIT: 3 round trips + handler, 1 flush | handler · [UPDATE · COMMIT]: 1 round trip + handler, 1 flush |\n" +
	"| in all | 6 round trips, 2 flushes | 2 round trips, 1 flush |\n" +
	"| without the middleware | BEGIN · handler · COMMIT: 2 round trips, 1 flush | the same |\n" +
	"| raw pgx floor (item 2) | INSERT · UPDATE: 2 round trips, 2 flushes | the same |\n\n" +
	"Three changes in `idempotency/`, none of them in the answers the tests define:\n\n" +
	"- Statements that need no answer in between travel together (pgx batches): the claim's transaction and the " +
	"BEGIN of the handler's, then the stored response and the COMMIT. The fence survives: the completing UPDATE " +
	"raises an error when the key is no longer ours, which aborts the transaction, so the COMMIT sent with it " +
	"cannot commit the effect (tested by the lease-takeover test).\n" +
	"- The claim commits asynchronously (`synchronous_commit` off for that transaction only). A claim lost in a " +
	"crash is a released claim: the completion commits synchronously in the handler's transaction, and its flush " +
	"covers every earlier WAL record, the claim included. Visibility to concurrent requests is unchanged " +
	"(`TestClaimCommitsAsyncHandlerCommitsDurably` checks that the handler's transaction keeps synchronous commit).\n" +
	"- With a tenant quota, the counter is bumped in the claim's statement and the statement raises an error over " +
	"the quota, so the quota costs no extra round trip either.\n\n" +
	"What remains is work, not waiting: the key row's insert and update with their index entries and WAL, and in Go " +
	"buffering the body, the canonical-JSON SHA-256 fingerprint, the response recorder, the stored headers, and " +
	"pgx building six batched statements where the floor has two (`ExtendedQueryBuilder.Build` in the profile); " +
	"see the Go CPU and PG CPU columns, with against without. At c=1 a request mostly waits, so saving a flush " +
	"and round trips decides, and the store is close to or above the floor. At c=16 the two cores are the limit " +
	"and PostgreSQL shares one WAL flush among the commits that arrive together (group commit), so the floor's " +
	"second flush costs it little and the throughput ratio follows the CPU per operation (Go + PG), where the " +
	"store spends about a quarter more: that is why item 2 at c=16 lands around 0.8, on either side of it from " +
	"run to run (min–max), and behind a floor that also commits its INSERT asynchronously. At c=16 the hold " +
	"handler's own PostgreSQL work dominates both variants of item 1. What would move it: fewer statements per " +
	"request for pgx to build and PostgreSQL to parse (the four transaction-control statements could travel as " +
	"one simple-protocol string if pgx offered a pipeline that mixes protocols), a narrower key row (the stored " +
	"headers as a few columns instead of JSON) and fewer allocations in the fingerprint and the recorder.\n\n" +
	"What the floor compares, and why 0.8 at c=16 is a coin toss: the floor is two autocommitted statements, so it " +
	"has no transaction around a handler and pays two flushes; the store pays one flush but runs the handler's " +
	"transaction, which is the guarantee itself (the effect and the stored response commit together). The variant " +
	"\"raw pgx in the store's shape\" sends the floor's statements in the store's two batches on one held " +
	"connection: against the asynchronous floor it prices that transaction (its four transaction-control " +
	"statements), and the store against it prices the middleware's own work and its fuller statements (the " +
	"upsert's conflict branch, the fence in the completion, the stored headers). In a profile the middleware's " +
	"Go work is spread thin (fingerprint, recorder, metrics, contexts, no function above a few percent; a few " +
	"µs per operation is the load driver parsing a request with httptest). In the runs for issue #17 the store " +
	"needed 1.1-1.25 × the floor's CPU per operation (Go + PG; the CPU column, which moves less than " +
	"throughput), while the throughput ratio at c=16 ranged from 0.77 to 1.5: when the machine is fsync-bound " +
	"(other engineers' builds writing to the same disk) the floor's second flush dominates and the store beats " +
	"it; when it is CPU-bound the ratio falls to the CPU ratio, about 0.8. Nothing found in the profiles is " +
	"worth the risk of a change to the claim path: statements are already prepared and cached by pgx, the pool " +
	"(16 connections) matches c=16, and each round trip already carries every statement that needs no answer " +
	"in between.\n\n" +
	"### 3. Webhook ingest\n\n" +
	"A new event through the gateway is SignalWithStart plus HTTP, the signature check, the phone number's " +
	"normalisation, the inbox INSERT (a commit that waits for its flush) and the UPDATE that marks it delivered " +
	"(another). The in-process Temporal server takes most of the CPU samples on both sides (profile), so at c=16 the " +
	"ratio is set by the engine; at c=1 the two flushed commits are the gap. What would move it (in `channels/`, " +
	"not changed here): mark the row delivered with an asynchronous commit — losing that mark in a crash only " +
	"makes the relay deliver again, and the conversation ignores event IDs it has seen. A redelivery is one " +
	"INSERT … ON CONFLICT DO NOTHING that writes nothing (no flush) and no Temporal call; what is left of it is " +
	"HTTP, the HMAC and the number parsing (profile).\n\n" +
	"### 4. End to end\n\n" +
	"At c=1 both sides take about a second, and nearly all of it is the engine handing workflow tasks to the " +
	"worker: a booking is some twenty workflow tasks in sequence, and on this embedded server each waits tens of " +
	"milliseconds from scheduled to started, on both sides alike (median wait in the table above), while an " +
	"activity starts at once (eager dispatch) and runs a few milliseconds: our real activities (HTTP to the " +
	"calendar and payment APIs with the idempotency layer, PostgreSQL, the outbox) take only a few milliseconds " +
	"more than the no-ops (median activity run in the table), and the gateway adds one HTTP request. With eight " +
	"bookings in flight, the process spends a few hundred milliseconds of CPU per booking on both sides (Go CPU " +
	"column), most of it in the Temporal server and its in-memory SQLite (profile), so the engine sets most of " +
	"the ratio; our work is the difference in the Go CPU and PG CPU columns. " +
	"What would move the absolute numbers: a Temporal server on its own machine with PostgreSQL or Cassandra " +
	"persistence (the production topology in `deploy/`), and for the dev server the workflow-task dispatch wait " +
	"(the same wait on both sides, so not a cost of exactly-once); for the saga itself, fewer workflow tasks " +
	"(each signal between appointment and payment costs one on both sides; the six search attribute upserts " +
	"ride on existing tasks).\n\n" +
	"### 5. Growth and the reaper\n\n" +
	"A claim is a primary-key upsert and a completion a primary-key update, so their cost barely depends on how " +
	"many keys are live: from 10 thousand to 1 million keys p95 grows by a fraction of a millisecond (ratio " +
	"above), plausibly from one more B-tree level and a table larger than shared_buffers (128 MB here), not with the " +
	"count. The reaper deletes 500 expired " +
	"keys per statement, oldest first, skipping locked rows, so a claim never waits for it; what a claim meets " +
	"during a reap is the CPU and WAL the deletes take from two shared cores (compare the longest claim during " +
	"and before the reap). Deleting faster means bigger batches (longer statements) or dropping whole partitions " +
	"of a table partitioned by expiry day, which would need a migration.\n"

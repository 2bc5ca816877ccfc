package bench

import (
	"fmt"
	"strings"
	"time"
)

// redisWin is how much faster the front must make new keys, the path
// bookonce takes on nearly every request, to be worth a second system.
const redisWin = 1.2

const redisIntro = `The front of seed 003 (a prototype in bench/redis_front_test.go) against the store alone, both
called in-process around a handler that answers 201 with a small JSON body and writes nothing, on Redis
at 127.0.0.1:6379 and the same PostgreSQL. The front runs one Lua script per request: SETNX of a pending
marker with the payload hash (TTL = the lease) and, when the key exists, the compare of the payload hash;
a completed response is cached after PostgreSQL committed it (TTL ending before the key's retention). A
cached entry answers a replay, or the 422 of a reused key; anything else (a miss, a pending marker, a
Redis error) goes to the store, which stays the truth. A hot key is one completed key that every request
of the run repeats. Before measuring, the benchmark checks that the front's replay is byte-identical to
the store's, that its 422 is the store's document, and that with Redis unreachable every answer comes
from PostgreSQL.`

// redisCPU is the CPU time the redis-server processes used since before.
func redisCPU(before map[string]time.Duration) (time.Duration, map[string]time.Duration) {
	now := procCPU("redis-server")
	return pgDelta(before, now), now
}

func (r *report) redisTables(b *strings.Builder) []target {
	ratiosHead(b, redisIntro, r.redis.series,
		"| c | path | front / store: ops/s | front / store: p50 latency | CPU per op, store: Go + PG µs | front: Go + PG + Redis µs |",
		"|---:|---|---:|---:|---:|---:|")
	var out []target
	wins := true
	for _, c := range concs(r.redis.series) {
		for _, path := range []string{redisNew, redisReplay, redisConflict} {
			pg, fr := find(r.redis.series, path+", "+sidePG, c), find(r.redis.series, path+", "+sideFront, c)
			if pg == nil || fr == nil {
				continue
			}
			tp := ratio(fr, pg, Result.OpsPerSec)
			fmt.Fprintf(b, "| %d | %s | %s | %s | %.0f | %.0f |\n", c, path, tp.Format("%.2f"),
				ratio(fr, pg, func(r Result) float64 { return ms(r.P50()) }).Format("%.2f"),
				cpuUs(pg, 0), cpuUs(fr, durSpread(r.redis.redisCPU[fr]).Median))
			if path == redisNew {
				wins = wins && tp.Median >= redisWin
				out = append(out, target{fmt.Sprintf("6. Redis front, new keys, c=%d", c),
					fmt.Sprintf("adopt only if ≥ %.1f × the store's throughput", redisWin),
					tp.Format("%.2f") + " (" + adoptVerdict(tp.Median >= redisWin) + ")"})
			}
		}
	}
	if wins {
		b.WriteString("\nThe front won on new keys in this run; adopting it still needs the guarantees below answered.\n")
	} else {
		b.WriteString("\n**Not adopted.** On new keys, the path nearly every request takes, the front does not win (targets above).\n")
	}
	b.WriteString("\n" + strings.Join(strings.Fields(redisDecision), " ") + "\n")
	return out
}

// cpuUs is a series' median CPU per op (Go + PostgreSQL) plus extraMs, in µs.
func cpuUs(s *series, extraMs float64) float64 {
	return (durSpread(s.cpuGo).Median + durSpread(s.cpuPG).Median + extraMs) * 1000
}

func adoptVerdict(win bool) string {
	if win {
		return "wins"
	}
	return "**no clear win**"
}

const redisDecision = `Why. A new key still needs PostgreSQL's claim and completion (the front
cannot decide anything before PostgreSQL has), so the front only adds: one round trip to Redis before
the claim (the script) and one after the completion (caching the response), and the Go and Redis CPU
for both. The front wins only on a hot completed key: a replay or a reused key's 422 from Redis skips
the store's claim attempt, the row lock and the replay counter, and the store is slowest exactly there
at c=16, because every copy of one key queues on that key's row lock. bookonce rarely meets that case:
a redelivery is one more copy of a request (a retry after a timeout, a webhook sent again), a small
fraction of the traffic and seldom sixteen at once, and the gateway's redeliveries already stop at the
inbox without reaching this store. What the front would cost besides time: a second copy of every
stored response (which can hold a customer's number) in a system outside the encryption at rest and
the retention rules of docs/privacy.md; replays answered from Redis no longer counted on the key row
(the replays column and the replay metric); expiry computed against two clocks (Redis must forget a
key before PostgreSQL does); and a second system to run whose loss is harmless only because every
answer falls back to PostgreSQL, so it can never be more than a cache. PostgreSQL already gives what
the front is for: the claim is one atomic upsert, a replay one round trip with the row locked, and a
conflicting payload the same. If hot keys ever matter, the cheaper step is in the store: answer a
completed key's replay without FOR UPDATE and count replays in batches.`

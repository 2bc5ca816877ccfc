# bookonce: `make run` starts the whole stack, `make test` runs every test.
# The Temporal server module needs Go >= 1.26.10; the go command fetches
# this toolchain from the module proxy on first use.
export GOTOOLCHAIN := go1.27.3

GO ?= go
# Two cores; -parallel 4 because the integration tests mostly wait (on
# timers, outages, the server), so four of them keep two cores busy.
TEST_FLAGS ?= -count=1 -timeout 20m -parallel 4
# Three test binaries at a time (go test's default is one per core): a
# test binary mostly waits (on its server, timers, outages at a proxy),
# so a third keeps both cores busy; the drill runs alone after them.
TEST_P ?= 3
# Test binaries are linked anew on every run (go test does not cache
# them), twelve of them with the Temporal server: without the DWARF
# tables and the symbol table a link takes markedly less time and memory.
# Stack traces in a failing test still name every function and line
# (they come from the pclntab, which stays).
TEST_LDFLAGS ?= -s -w

.PHONY: run test vet lint vulncheck vulncheck-all build fuzz histories release-histories bench soak chaos clean help

help:
	@echo "make run    start PostgreSQL (found or private), Temporal + Web UI, worker, gateway and the APIs"
	@echo "make test   run every test against real PostgreSQL and an in-process Temporal server"
	@echo "make build  build all commands into ./bin"

run:
	@echo "bookonce: building (the first build compiles the Temporal server and takes a few minutes)…"
	@$(GO) build -o bin/dev ./cmd/dev
	@echo "bookonce: starting…"
	@./bin/dev

build:
	$(GO) build -o bin/ ./cmd/...

vet:
	$(GO) vet ./...

# Static analysis: staticcheck at a pinned version (run through the module
# proxy, so it needs no install and does not enter go.mod), and go.mod /
# go.sum exactly as `go mod tidy` would write them.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) mod tidy -diff
	$(GO) run $(STATICCHECK) ./...

# Known vulnerabilities that our shipped binaries call, from a pinned
# offline copy of the Go vulnerability database (.ci/vulncheck says how).
# CI runs it; vulncheck-all also scans the dev tools and test helpers
# (the embedded Temporal server and UI), which the image does not hold.
vulncheck:
	bash .ci/vulncheck
vulncheck-all:
	VULNCHECK_PKGS=./... bash .ci/vulncheck

# `go vet ./...` has run, so go test does not vet each package again
# (-vet=off). go test starts test binaries in the order given, TEST_P at a
# time; the long ones go first, so no core idles at the end behind one of
# them: the drill (processes that mostly wait on kills and retries), then
# the packages whose integration tests run in parallel.
TEST_FIRST := ./drill ./workflows ./channels ./agent ./bench ./internal/devserver
test: vet lint
	@rest="$$($(GO) list ./... | grep -vxF "$$($(GO) list $(TEST_FIRST))")"; \
	echo "$(GO) test -p $(TEST_P) -ldflags='$(TEST_LDFLAGS)' $(TEST_FLAGS) -vet=off $(TEST_FIRST) <the other packages>"; \
	$(GO) test -p $(TEST_P) -ldflags='$(TEST_LDFLAGS)' $(TEST_FLAGS) -vet=off $(TEST_FIRST) $$rest

# Short fuzzing runs of the parsers; the seeds in testdata run in `make test`.
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzCanonicalJSON -fuzztime=30s ./idempotency/
	$(GO) test -run='^$$' -fuzz=FuzzParseForm -fuzztime=30s ./payments/stripeapi/
	$(GO) test -run='^$$' -fuzz=FuzzDecodeHoldRequest -fuzztime=30s ./calendar/
	$(GO) test -run='^$$' -fuzz=FuzzExtract -fuzztime=30s ./intent/

# The cost of exactly-once, measured side by side, and the latency at a
# steady 5 bookings/s; writes docs/benchmarks.md (about 35 minutes, 25 of
# them the latency item). A smoke run of the same code is part of `make test`.
bench:
	BOOKONCE_BENCH=1 $(GO) test -count=1 -run TestBenchFull -timeout 90m -v ./bench/

# The soak: confirmed bookings' lifecycles opened through the real APIs
# up to each level of SOAK_N (default 1000,5000,20000) on each Temporal
# backend of SOAK_BACKENDS (make run's SQLite file, and PostgreSQL as
# compose runs it), with the seeding rate, latency and memory at each
# (docs/benchmarks.md, "Soak"). The worker and the Temporal server run as
# processes of their own; each backend's figures go to docs/soak/, and the
# plots there are drawn from them. TestSoakSmoke, 100 of them, is in
# `make test`.
SOAK_BACKENDS ?= sqlite postgres
comma := ,
soak:
	@set -e; for b in $(subst $(comma), ,$(SOAK_BACKENDS)); do \
	  BOOKONCE_SOAK=1 SOAK_BACKENDS=$$b $(GO) test -count=1 -run 'TestSoakFull$$' -timeout 3h -v ./bench/; \
	done; \
	BOOKONCE_SOAK=1 $(GO) test -count=1 -run 'TestSoakPlots$$' ./bench/

# The acceptance drill: CHAOS_N bookings through the whole stack with
# faults and worker kills; prints the pilot metrics, writes
# chaos-report.json, fails on any duplicate, loss or false merge.
CHAOS_N ?= 1000
chaos:
	@$(GO) build -o bin/chaos ./cmd/chaos
	./bin/chaos -n $(CHAOS_N) -report chaos-report.json $(CHAOS_FLAGS)

# Re-record the workflow histories that `make test` replays (after an
# intended workflow change; see README "Changing a workflow").
histories:
	BOOKONCE_RECORD_HISTORIES=1 $(GO) test -count=1 -run 'TestRecordHistories' ./workflows/

# Freeze today's recorded histories as release N's corpus, at each
# release: `make test` replays every release's corpus, so code that could
# no longer continue a run an earlier release left open fails before it
# is deployed. A corpus is never rewritten; delete it once no open
# workflow was started by that release's workers.
release-histories:
	@test -n "$(RELEASE)" || { echo "usage: make release-histories RELEASE=<number of the release being cut>" >&2; exit 2; }
	@dir=workflows/testdata/histories/release-$(RELEASE); \
	if [ -e "$$dir" ]; then echo "$$dir exists: a release's corpus is never rewritten" >&2; exit 2; fi; \
	mkdir -p "$$dir" && cp workflows/testdata/histories/*.json "$$dir"/ && \
	git rev-parse HEAD > "$$dir/COMMIT" && \
	echo "froze $$(ls "$$dir"/*.json | wc -l) histories of $$(cat "$$dir/COMMIT") in $$dir"

clean:
	rm -rf bin

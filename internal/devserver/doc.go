// Package devserver embeds a single-process Temporal server (SQLite
// persistence, all four services) and the Temporal Web UI, written on the
// server's public Go API. `make run` uses it as the default cluster and the
// tests use it in memory; production points TEMPORAL_ADDRESS elsewhere.
package devserver

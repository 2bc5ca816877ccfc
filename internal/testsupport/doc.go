// Package testsupport starts the real components tests run against: a fresh
// PostgreSQL database per test (migrated, dropped afterwards) and an
// in-process Temporal server. It is imported only from _test files.
package testsupport

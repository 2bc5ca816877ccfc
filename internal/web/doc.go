// Package web holds what every bookonce HTTP service shares: RFC 9457
// problem documents, bearer-token tenant authentication, and a server with
// /healthz and /metrics that shuts down gracefully.
package web

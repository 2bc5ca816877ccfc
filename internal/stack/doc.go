// Package stack assembles bookonce's processes from configuration: the
// calendar API, the payment API, the webhook gateway and the Temporal
// worker. The cmd/ programs run one each; cmd/dev runs them all.
package stack

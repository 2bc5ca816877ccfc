// Package agent serves bookonce's booking tools to AI agents: over MCP
// (Streamable HTTP at /mcp, built on the official Go SDK) and as plain
// HTTP function calls (/v1/agent/tools). An agent's tool call is delivered
// at least once, like a webhook: a timeout is an unknown, the model
// re-plans in other words, two calls run in parallel. So the tools never
// take the call as the operation. A booking's identity is the business
// intent (tenant, customer, service, slot), computed here from canonical
// fields and decided by the same cross-channel dedup as voice and
// WhatsApp (package dedup); operation IDs are issued and signed by the
// server, never invented by the model; and a mutating tool waits only a
// few seconds before it answers "pending" with the handle to ask again.
// The design is in docs/agent-tools.md.
package agent

package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bookonce/bookonce/internal/mask"
)

// tool is one tool's contract, served over MCP and HTTP alike.
type tool struct {
	name        ToolName
	description string
	annotations *mcp.ToolAnnotations
	in, out     *jsonschema.Schema
	// addMCP registers the tool on an MCP server for s.
	addMCP func(srv *mcp.Server, s *Service)
	// run decodes JSON arguments and runs the tool (the HTTP door).
	run func(ctx context.Context, s *Service, c Caller, args json.RawMessage) (any, error)
}

// outcomer is an output that names its outcome for the metrics (a
// booking's status).
type outcomer interface{ outcome() string }

func (a BookingAnswer) outcome() string { return string(a.Status) }

// define builds a tool from one of Service's methods.
func define[In, Out any](name ToolName, description string, ann *mcp.ToolAnnotations, method func(*Service, context.Context, Caller, In) (Out, error)) tool {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic("agent: input schema of " + string(name) + ": " + err.Error())
	}
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic("agent: output schema of " + string(name) + ": " + err.Error())
	}
	return tool{
		name: name, description: description, annotations: ann, in: in, out: out,
		addMCP: func(srv *mcp.Server, s *Service) {
			mcp.AddTool(srv, &mcp.Tool{Name: string(name), Description: description, Annotations: ann, InputSchema: in, OutputSchema: out},
				func(ctx context.Context, req *mcp.CallToolRequest, input In) (*mcp.CallToolResult, Out, error) {
					c, err := s.callerOf(req)
					if err != nil {
						var zero Out
						return nil, zero, err
					}
					res, err := observe(ctx, s, name, c, func() (Out, error) { return method(s, ctx, c, input) })
					return nil, res, err
				})
		},
		run: func(ctx context.Context, s *Service, c Caller, args json.RawMessage) (any, error) {
			var input In
			if len(args) > 0 {
				if err := json.Unmarshal(args, &input); err != nil {
					return nil, &argsError{err}
				}
			}
			return observe(ctx, s, name, c, func() (Out, error) { return method(s, ctx, c, input) })
		},
	}
}

// argsError: the arguments do not match the tool's schema.
type argsError struct{ err error }

func (e *argsError) Error() string {
	return "arguments do not match the tool's input schema: " + e.err.Error()
}

// observe runs one tool call, records it (no personal data: tenant, tool,
// operation, outcome, duration) and counts it.
func observe[Out any](ctx context.Context, s *Service, name ToolName, c Caller, f func() (Out, error)) (Out, error) {
	started := time.Now()
	out, err := f()
	outcome := "ok"
	switch {
	case isRefusal(err):
		outcome = "refused"
	case err != nil:
		outcome = "error"
	default:
		if o, ok := any(out).(outcomer); ok {
			outcome = o.outcome()
		}
	}
	s.Metrics.call(name, outcome)
	attrs := []any{"tenant", c.Tenant, "tool", string(name), "outcome", outcome, "duration_ms", time.Since(started).Milliseconds()}
	if c.ClientKey != "" {
		attrs = append(attrs, "client_key", c.ClientKey) // recorded, never trusted alone
	}
	if a, ok := any(out).(BookingAnswer); ok {
		attrs = append(attrs, "operation", a.operation, "intent_id", a.intentID, "workflow_id", a.WorkflowID)
	}
	if err != nil {
		attrs = append(attrs, "error", mask.Phones(err.Error())) // the model's input may carry a number
	}
	s.Logger.InfoContext(ctx, "agent tool call", attrs...)
	return out, err
}

// isRefusal: an operation ID the server will not honour.
func isRefusal(err error) bool {
	for _, r := range []error{ErrOperationForged, ErrOperationForeign, ErrOperationStale, ErrOperationExpired, ErrOperationReused} {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}

func hint(b bool) *bool { return &b }

var (
	toolsOnce  sync.Once
	toolList   []tool
	capVersion string
)

// tools is the tool contract, in the order tools/list shows it.
func tools() []tool {
	toolsOnce.Do(func() {
		toolList = defineTools()
		capVersion = versionOf(toolList)
	})
	return toolList
}

// CapabilitiesVersion names the tool contract: a digest of every tool's
// name and schemas. A plan (and an operation ID) made against another
// contract is refused as stale instead of being half-understood.
func CapabilitiesVersion() string {
	tools()
	return capVersion
}

func defineTools() []tool {
	return []tool{
		define(ToolListServices, "List the business's bookable services (IDs, durations, deposits) and its time zone.",
			&mcp.ToolAnnotations{Title: "List services", ReadOnlyHint: true, OpenWorldHint: hint(false)}, (*Service).ListServices),
		define(ToolFindSlots, "Find free start times for a service in a window (from/to in RFC 3339, or when as the customer said it). Also returns a fresh operation_id for booking one of them.",
			&mcp.ToolAnnotations{Title: "Find free slots", ReadOnlyHint: true, OpenWorldHint: hint(false)}, (*Service).FindSlots),
		define(ToolBeginOperation, "Start one booking operation: returns a server-signed operation_id. Pass it to book_appointment and reuse it unchanged on every retry of that booking; never invent one.",
			&mcp.ToolAnnotations{Title: "Begin a booking operation", ReadOnlyHint: true, OpenWorldHint: hint(false)}, (*Service).BeginOperation),
		define(ToolBookAppointment, "Book one appointment for a customer. Safe to retry: the same customer, service and slot is booked once, whatever the wording, and a retry returns the same answer. status: confirmed, pending (call get_booking later; give the customer payment_url if present), needs_confirmation (ask the customer about the existing booking first), rejected, already_booked.",
			&mcp.ToolAnnotations{Title: "Book an appointment", DestructiveHint: hint(false), IdempotentHint: true, OpenWorldHint: hint(true)}, (*Service).Book),
		define(ToolGetBooking, "Get a booking's current state by workflow_id or booking_id. Use it after a pending answer instead of booking again. status: as book_appointment's, or cancelled, no_show, completed for a booking that is over (start is its current time, after a move too).",
			&mcp.ToolAnnotations{Title: "Get a booking", ReadOnlyHint: true, OpenWorldHint: hint(false)}, (*Service).GetBooking),
		define(ToolListBookings, "List a customer's upcoming appointments (booked or under way) with their state.",
			&mcp.ToolAnnotations{Title: "List a customer's bookings", ReadOnlyHint: true, OpenWorldHint: hint(false)}, (*Service).ListBookings),
		define(ToolCancelBooking, "Cancel a confirmed booking by workflow_id or booking_id. Safe to retry: the booking is cancelled once, its deposit refunded in full when cancelled in time (else kept, as the answer says), and the customer told once. status: cancelled, pending (call cancel_booking again with the same id), not_changed (message says why).",
			&mcp.ToolAnnotations{Title: "Cancel a booking", DestructiveHint: hint(true), IdempotentHint: true, OpenWorldHint: hint(true)}, (*Service).CancelBooking),
		define(ToolRescheduleBooking, "Move a booking to another start. Not available yet: answers so and changes nothing (cancel_booking and book_appointment instead).",
			&mcp.ToolAnnotations{Title: "Reschedule a booking (not available yet)", DestructiveHint: hint(true), IdempotentHint: true, OpenWorldHint: hint(true)}, (*Service).RescheduleBooking),
	}
}

func versionOf(ts []tool) string {
	h := sha256.New()
	for _, t := range ts {
		in, err := json.Marshal(t.in)
		if err != nil {
			panic("agent: input schema of " + string(t.name) + ": " + err.Error())
		}
		out, err := json.Marshal(t.out)
		if err != nil {
			panic("agent: output schema of " + string(t.name) + ": " + err.Error())
		}
		h.Write([]byte(string(t.name) + "\x00"))
		h.Write(in)
		h.Write(out)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

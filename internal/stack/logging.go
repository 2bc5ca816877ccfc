package stack

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/mask"
)

// Logger builds the process logger: text for people, JSON for machines.
// Phone numbers are masked in every line (see MaskPhones).
func Logger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(MaskPhones(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(MaskPhones(slog.NewTextHandler(w, opts)))
}

// MaskPhones wraps next so that E.164 phone numbers in the message and in
// every attribute (also nested in groups, errors and values) are masked
// by mask.Phones, as everywhere else: "+4915112345678" -> "+49·········78".
// Numbers reach logs in places no caller controls: the conversation
// workflow ID customer:<tenant>:<E164> is a field of every Temporal SDK
// log line, and provider errors repeat the recipient.
func MaskPhones(next slog.Handler) slog.Handler { return maskingHandler{next} }

type maskingHandler struct{ next slog.Handler }

func (h maskingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h maskingHandler) Handle(ctx context.Context, r slog.Record) error {
	masked := slog.NewRecord(r.Time, r.Level, mask.Phones(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		masked.AddAttrs(maskAttr(a))
		return true
	})
	return h.next.Handle(ctx, masked)
}

func (h maskingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return maskingHandler{h.next.WithAttrs(maskAttrs(attrs))}
}

func (h maskingHandler) WithGroup(name string) slog.Handler {
	return maskingHandler{h.next.WithGroup(name)}
}

func maskAttrs(attrs []slog.Attr) []slog.Attr {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = maskAttr(a)
	}
	return out
}

// maskAttr masks a's value. A value of another kind (an error, a struct) is
// kept as it is unless its text holds a number; then its masked text
// replaces it, since the inner handler would print the number otherwise.
func maskAttr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	switch a.Value.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(mask.Phones(a.Value.String()))
	case slog.KindGroup:
		a.Value = slog.GroupValue(maskAttrs(a.Value.Group())...)
	case slog.KindAny:
		var text string
		if err, ok := a.Value.Any().(error); ok {
			text = err.Error()
		} else {
			text = fmt.Sprintf("%+v", a.Value.Any())
		}
		if masked := mask.Phones(text); masked != text {
			a.Value = slog.StringValue(masked)
		}
	}
	return a
}

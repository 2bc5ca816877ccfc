package tenants

import (
	"fmt"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// reader walks a YAML node tree, records the line of every field it reads
// and collects problems instead of stopping at the first, so one run of
// the command shows everything wrong with a file.
type reader struct {
	file     string
	pos      map[string]int
	problems []Problem
}

func (r *reader) fail(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	r.problems = append(r.problems, Problem{File: r.file, Line: line, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (r *reader) at(path string, n *yaml.Node) {
	if n != nil {
		r.pos[path] = n.Line
	}
}

// field is one key of a mapping with its value.
type field struct {
	key   string
	value *yaml.Node
}

// mapping returns the keys of a mapping node in order, rejecting keys that
// are not in allowed (a typo must not be silently ignored), duplicates and
// missing required ones (named with a leading '!' in allowed).
func (r *reader) mapping(n *yaml.Node, path string, allowed ...string) map[string]*yaml.Node {
	r.at(path, n)
	if n.Kind != yaml.MappingNode {
		r.fail(n, path, "must be a mapping (key: value lines)")
		return nil
	}
	known, required := map[string]bool{}, []string{}
	for _, a := range allowed {
		if a[0] == '!' {
			a = a[1:]
			required = append(required, a)
		}
		known[a] = true
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := join(path, k.Value)
		switch {
		case !known[k.Value]:
			r.fail(k, sub, "unknown key (allowed: %s)", listAllowed(allowed))
		case out[k.Value] != nil:
			r.fail(k, sub, "given twice")
		default:
			out[k.Value] = v
			r.at(sub, v)
		}
	}
	for _, k := range required {
		if out[k] == nil {
			r.fail(n, join(path, k), "missing")
		}
	}
	return out
}

func listAllowed(allowed []string) string {
	s := ""
	for i, a := range allowed {
		if a[0] == '!' {
			a = a[1:]
		}
		if i > 0 {
			s += ", "
		}
		s += a
	}
	return s
}

// pairs returns a mapping's entries in order, for maps keyed by data
// (languages, weekdays, template names) rather than by a fixed schema.
func (r *reader) pairs(n *yaml.Node, path string) []field {
	r.at(path, n)
	if n.Kind != yaml.MappingNode {
		r.fail(n, path, "must be a mapping (key: value lines)")
		return nil
	}
	var out []field
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			r.fail(k, join(path, k.Value), "given twice")
			continue
		}
		seen[k.Value] = true
		r.at(join(path, k.Value), v)
		out = append(out, field{k.Value, v})
	}
	return out
}

// list returns the items of a sequence node.
func (r *reader) list(n *yaml.Node, path string) []*yaml.Node {
	r.at(path, n)
	if n.Kind != yaml.SequenceNode {
		r.fail(n, path, "must be a list")
		return nil
	}
	for i, item := range n.Content {
		r.at(index(path, i), item)
	}
	return n.Content
}

// str returns a scalar's text; ok is false (and a problem recorded) for
// anything else.
func (r *reader) str(n *yaml.Node, path string) (string, bool) {
	if n == nil {
		return "", false
	}
	r.at(path, n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		r.fail(n, path, "must be a single value")
		return "", false
	}
	return n.Value, true
}

// texts returns a list of scalars.
func (r *reader) texts(n *yaml.Node, path string) []string {
	if n == nil {
		return nil
	}
	var out []string
	for i, item := range r.list(n, path) {
		if s, ok := r.str(item, index(path, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

func (r *reader) integer(n *yaml.Node, path string) (int64, bool) {
	s, ok := r.str(n, path)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.fail(n, path, "must be a whole number, got %q", s)
		return 0, false
	}
	return v, true
}

// duration reads a Go duration ("30m", "1h30m") that must be positive.
func (r *reader) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := r.str(n, path)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		r.fail(n, path, "must be a duration such as 30m or 1h30m, got %q", s)
		return 0, false
	}
	if d <= 0 {
		r.fail(n, path, "must be positive, got %s", s)
		return 0, false
	}
	return d, true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

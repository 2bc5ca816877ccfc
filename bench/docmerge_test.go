package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// section is one "## " section of a markdown document, heading line
// included; the first section of a split is the preamble (heading "").
type section struct{ heading, text string }

func splitSections(doc string) []section {
	var out []section
	cur := section{}
	for _, line := range strings.SplitAfter(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			out = append(out, cur)
			cur = section{heading: strings.TrimSpace(line)}
		}
		cur.text += line
	}
	return append(out, cur)
}

func joinSections(ss []section) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.text)
	}
	return b.String()
}

// Headings the merge places sections before.
const (
	headingWhere    = "## Where the time goes"
	headingProfiles = "## CPU profiles"
)

// insertBefore puts s before the section headed at, or at the end.
func insertBefore(ss []section, at string, s section) []section {
	i := slices.IndexFunc(ss, func(x section) bool { return x.heading == at })
	if i < 0 {
		i = len(ss)
	}
	return slices.Insert(ss, i, s)
}

// replaceSections is old with each section of items in place of the
// section of the same heading (a new one goes before "Where the time
// goes"): a BOOKONCE_BENCH_ONLY run updates its items and keeps the rest.
func replaceSections(old, items string) string {
	ss := splitSections(old)
	for _, s := range splitSections(items)[1:] {
		s.text = strings.TrimRight(s.text, "\n") + "\n\n"
		if i := slices.IndexFunc(ss, func(x section) bool { return x.heading == s.heading }); i >= 0 {
			ss[i] = s
		} else {
			ss = insertBefore(ss, headingWhere, s)
		}
	}
	return joinSections(ss)
}

// keepHandWritten is a full run's document plus the sections of old the
// generator does not write (hand-written findings, such as a stall's root
// cause), before "CPU profiles".
func keepHandWritten(old, fresh string) string {
	ss := splitSections(fresh)
	for _, s := range splitSections(old)[1:] {
		if !slices.ContainsFunc(ss, func(x section) bool { return x.heading == s.heading }) {
			ss = insertBefore(ss, headingProfiles, s)
		}
	}
	return joinSections(ss)
}

func TestReplaceSectionsUpdatesOnlyTheMeasuredItems(t *testing.T) {
	old := "# B\n\npre\n\n## 1. a\n\nold a\n\n## 2. b\n\nold b\n\n## Where the time goes\n\nw\n\n## Notes\n\nhand\n"
	require.Equal(t, "# B\n\npre\n\n## 1. a\n\nold a\n\n## 2. b\n\nnew b\n\n## Where the time goes\n\nw\n\n## Notes\n\nhand\n",
		replaceSections(old, "\n## 2. b\n\nnew b\n"))
	require.Equal(t, "# B\n\npre\n\n## 1. a\n\nold a\n\n## 2. b\n\nold b\n\n## 6. c\n\nnew c\n\n## Where the time goes\n\nw\n\n## Notes\n\nhand\n",
		replaceSections(old, "\n## 6. c\n\nnew c\n"))
}

func TestKeepHandWrittenCarriesSectionsTheGeneratorDoesNotWrite(t *testing.T) {
	old := "# B\n\n## 1. a\n\nold a\n\n## Stall\n\nhand\n\n## CPU profiles\n\nold p\n"
	fresh := "# B\n\n## 1. a\n\nnew a\n\n## CPU profiles\n\nnew p\n"
	require.Equal(t, "# B\n\n## 1. a\n\nnew a\n\n## Stall\n\nhand\n\n## CPU profiles\n\nnew p\n", keepHandWritten(old, fresh))
}

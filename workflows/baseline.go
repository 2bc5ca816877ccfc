package workflows

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// A Baseline stands for many GetVersion changes of one workflow type with
// one. Each change a run passes through workflow.GetVersion costs the run a
// marker and a TemporalChangeVersion upsert, which is one more visibility
// write and one more billed action, for every change ever made to the type
// (docs/deploy.md, "Baselines"). A run that takes the baseline at its start
// records one marker and one upsert, and every change the baseline covers
// answers the version the baseline fixes, without a marker of its own.
//
// Runs that started before the baseline existed replay it as
// DefaultVersion (their first workflow task is history, and has no marker
// for it) and go on asking each change as they did, so they keep their
// branches. That is why the baseline is taken first thing in the run's
// first workflow task, before anything can block.
//
// A baseline may carry a change of its own, which only runs that took it
// make (Versions.Taken): what the covered changes left redundant, such as
// an upsert of what the start's search attributes already say.
//
// The versions a baseline covers never change: a later change of a
// covered ID (its version 2) or a new change is asked through
// workflow.GetVersion as usual, until the next baseline version covers it
// too (a new entry in Sets).
type Baseline struct {
	// ID is the baseline's own change ID, in Changes like any other.
	ID string
	// Sets are the changes each version of the baseline covers, with the
	// version a run at that baseline version takes for each.
	Sets map[workflow.Version]map[string]workflow.Version
}

// Max is the newest version of the baseline.
func (b Baseline) Max() workflow.Version {
	var newest workflow.Version
	for v := range b.Sets {
		newest = max(newest, v)
	}
	return newest
}

// Take asks the baseline's version for this run; call it first thing in
// the workflow function.
func (b Baseline) Take(ctx workflow.Context) Versions {
	v := workflow.GetVersion(ctx, b.ID, workflow.DefaultVersion, b.Max())
	return Versions{covered: b.Sets[v]}
}

// Versions answers a run's GetVersion calls: from the baseline it took,
// for the changes the baseline covers, else from workflow.GetVersion. The
// zero value asks workflow.GetVersion for everything.
type Versions struct {
	covered map[string]workflow.Version
}

// Taken reports whether the run took a baseline.
func (v Versions) Taken() bool { return v.covered != nil }

// GetVersion is workflow.GetVersion for a run that may have taken a
// baseline: a covered change answers the baseline's version (which must
// still be supported), any other asks workflow.GetVersion.
func (v Versions) GetVersion(ctx workflow.Context, changeID string, minSupported, maxSupported workflow.Version) workflow.Version {
	fixed, ok := v.covered[changeID]
	if !ok {
		return workflow.GetVersion(ctx, changeID, minSupported, maxSupported)
	}
	if fixed < minSupported || fixed > maxSupported {
		// As workflow.GetVersion does for a recorded version the code no
		// longer supports: the run cannot go on with this code.
		panic(fmt.Sprintf("baseline version %d of change %q is outside the supported %d..%d", fixed, changeID, minSupported, maxSupported))
	}
	return fixed
}

// Upsert publishes search attributes. A run that took a baseline upserts
// only when the updates change what its search attributes say (those it
// started with, and its upserts since): an upsert of the same values is
// one more visibility write and billed action for nothing. Any other run
// upserts every time, as it always did.
func (v Versions) Upsert(ctx workflow.Context, updates ...temporal.SearchAttributeUpdate) error {
	if v.Taken() && !changes(workflow.GetTypedSearchAttributes(ctx), updates) {
		return nil
	}
	return workflow.UpsertTypedSearchAttributes(ctx, updates...)
}

// changes reports whether updates applied to current change a value.
func changes(current temporal.SearchAttributes, updates []temporal.SearchAttributeUpdate) bool {
	before := current.GetUntypedValues()
	after := temporal.NewSearchAttributes(append([]temporal.SearchAttributeUpdate{current.Copy()}, updates...)...).GetUntypedValues()
	return !maps.EqualFunc(before, after, sameValue)
}

// sameValue compares two search attribute values; times by instant.
func sameValue(a, b any) bool {
	switch a := a.(type) {
	case time.Time:
		b, ok := b.(time.Time)
		return ok && a.Equal(b)
	case []string:
		b, ok := b.([]string)
		return ok && slices.Equal(a, b)
	}
	return a == b
}

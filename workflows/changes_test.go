package workflows_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestChangesListsEveryGetVersion keeps workflows.Changes whole: every
// workflow.GetVersion in the workflows' code is listed with its newest
// version, and nothing else is, so that `starter versions` counts every
// change an open workflow can carry.
func TestChangesListsEveryGetVersion(t *testing.T) {
	found := getVersionCalls(t, ".")
	listed := map[string]workflow.Version{}
	for _, c := range workflows.Changes {
		_, twice := listed[c.ID]
		require.False(t, twice, "%s listed twice", c.ID)
		listed[c.ID] = c.Max
	}
	for _, b := range baselines {
		found[b.ID] = b.Max()
	}
	require.Equal(t, found, listed, "workflows.Changes against the GetVersion calls and baselines in the code (add or drop the difference in workflows/changes.go)")
}

// baselines are the workflow types' baselines.
var baselines = []workflows.Baseline{appointment.Baseline, conversation.Baseline, lifecycle.Baseline}

// TestBaselinesCoverChangesTheCodeAsks keeps each baseline honest: it
// covers only changes the code asks, at a version the code still
// supports, and each version of it covers every change the one before did.
func TestBaselinesCoverChangesTheCodeAsks(t *testing.T) {
	asked := getVersionCalls(t, ".")
	for _, b := range baselines {
		require.Contains(t, b.Sets, b.Max(), b.ID)
		for v, set := range b.Sets {
			require.GreaterOrEqual(t, v, workflow.Version(1), b.ID)
			for id, at := range set {
				require.Contains(t, asked, id, "%s %d covers %s, which no GetVersion asks", b.ID, v, id)
				require.LessOrEqual(t, at, asked[id], "%s %d covers %s at %d, newer than the code asks", b.ID, v, id, at)
			}
			if prev, ok := b.Sets[v-1]; ok {
				for id := range prev {
					require.Contains(t, set, id, "%s %d drops %s, which %d covered", b.ID, v, id, v-1)
				}
			}
		}
	}
}

// getVersionCalls finds the GetVersion calls in the non-test Go files
// under root: change ID and maximum version, each a literal or a constant
// declared in the code scanned.
func getVersionCalls(t *testing.T, root string) map[string]workflow.Version {
	fset := token.NewFileSet()
	consts := map[string]string{} // "pkg.Name" and "Name" → literal
	var files []*ast.File
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files = append(files, f)
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
								consts[f.Name.Name+"."+name.Name] = lit.Value
							}
						}
					}
				}
			}
		}
		return nil
	}))
	out := map[string]workflow.Version{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if forwardsGetVersion(f, n) {
				return false
			}
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 4 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "GetVersion" {
				return true
			}
			id, err := strconv.Unquote(literal(t, fset, consts, f.Name.Name, call.Args[1]))
			require.NoError(t, err, fset.Position(call.Pos()))
			newest, err := strconv.Atoi(literal(t, fset, consts, f.Name.Name, call.Args[3]))
			require.NoError(t, err, fset.Position(call.Pos()))
			out[id] = max(out[id], workflow.Version(newest))
			return true
		})
	}
	return out
}

// forwardsGetVersion reports whether n is a method of the baseline kit in
// package workflows, whose GetVersion calls pass on another's change ID.
func forwardsGetVersion(f *ast.File, n ast.Node) bool {
	fn, ok := n.(*ast.FuncDecl)
	if !ok || f.Name.Name != "workflows" || fn.Recv == nil {
		return false
	}
	recv, ok := fn.Recv.List[0].Type.(*ast.Ident)
	return ok && (recv.Name == "Baseline" || recv.Name == "Versions")
}

// literal is the source text of a literal argument, or of the constant
// it names in package pkg (or, qualified, in another package scanned).
func literal(t *testing.T, fset *token.FileSet, consts map[string]string, pkg string, e ast.Expr) string {
	var key string
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Value
	case *ast.Ident:
		key = pkg + "." + e.Name
	case *ast.SelectorExpr:
		key = e.X.(*ast.Ident).Name + "." + e.Sel.Name
	}
	v, ok := consts[key]
	require.True(t, ok, "%s: a GetVersion argument the test cannot read (%T %s)", fset.Position(e.Pos()), e, key)
	return v
}

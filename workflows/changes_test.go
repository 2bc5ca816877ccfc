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
	require.Equal(t, found, listed, "workflows.Changes against the GetVersion calls in the code (add or drop the difference in workflows/changes.go)")
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

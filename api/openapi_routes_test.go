package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type route struct {
	pattern    string // as registered, e.g. "POST /v1/holds/{id}/confirm"
	method     string // "" for patterns without a method
	path       string // OpenAPI form: wildcards as {name}
	idempotent bool   // registered through the idempotency middleware
	handler    string // the method registered, e.g. "createHold"; "" for a func literal
	pos        string
}

// goPackage is the parsed non-test Go files of one directory.
type goPackage struct {
	dir    string
	fset   *token.FileSet
	files  []*ast.File
	consts map[string]string // package string constants
}

func loadPackage(t *testing.T, dir string) *goPackage {
	t.Helper()
	pkg := &goPackage{dir: dir, fset: token.NewFileSet()}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(pkg.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		pkg.files = append(pkg.files, f)
	}
	pkg.consts = stringConstants(pkg.files)
	return pkg
}

// method returns the method declared with name (on any receiver): a
// package may have a function of the same name (payments.getIntent).
func (p *goPackage) method(name string) *ast.FuncDecl {
	for _, f := range p.files {
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == name && fn.Body != nil {
				return fn
			}
		}
	}
	return nil
}

// registeredRoutes finds, in the non-test Go files of dirs, every pattern
// registered on a ServeMux created by http.NewServeMux in the same
// function: direct mux.Handle/mux.HandleFunc calls, and calls of local
// helpers (func literals such as idem) whose body registers their first
// argument. Patterns may be string literals or package string constants.
func registeredRoutes(t *testing.T, dirs ...string) []route {
	t.Helper()
	var out []route
	for _, dir := range dirs {
		out = append(out, loadPackage(t, dir).routes(t)...)
	}
	return out
}

func (p *goPackage) routes(t *testing.T) []route {
	t.Helper()
	var out []route
	for _, f := range p.files {
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
				out = append(out, registrationsIn(t, p.fset, fn.Body, p.consts)...)
			}
		}
	}
	return out
}

func stringConstants(files []*ast.File) map[string]string {
	consts := map[string]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil {
							consts[name.Name] = s
						}
					}
				}
			}
		}
	}
	return consts
}

// wrapper is a local helper such as idem := func(op string, h ...) { mux.Handle(op, ...) }.
type wrapper struct {
	lit        *ast.FuncLit
	idempotent bool
}

func registrationsIn(t *testing.T, fset *token.FileSet, body *ast.BlockStmt, consts map[string]string) []route {
	t.Helper()
	muxes := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok {
			for i, rhs := range as.Rhs {
				if isCallTo(rhs, "http", "NewServeMux") && i < len(as.Lhs) {
					if id, ok := as.Lhs[i].(*ast.Ident); ok {
						muxes[id.Name] = true
					}
				}
			}
		}
		return true
	})
	if len(muxes) == 0 {
		return nil
	}
	isRegistration := func(call *ast.CallExpr) bool {
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") || len(call.Args) != 2 {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && muxes[x.Name]
	}

	wrappers := map[string]wrapper{}
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		name, ok1 := as.Lhs[0].(*ast.Ident)
		lit, ok2 := as.Rhs[0].(*ast.FuncLit)
		if !ok1 || !ok2 || len(lit.Type.Params.List) == 0 || len(lit.Type.Params.List[0].Names) == 0 {
			return true
		}
		param := lit.Type.Params.List[0].Names[0].Name
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if ok && isRegistration(call) {
				if id, ok := call.Args[0].(*ast.Ident); ok && id.Name == param {
					wrappers[name.Name] = wrapper{lit: lit, idempotent: callsMiddleware(call.Args[1])}
				}
			}
			return true
		})
		return true
	})

	var out []route
	add := func(call *ast.CallExpr, idempotent bool) {
		pos := fset.Position(call.Pos()).String()
		var pattern string
		switch a := call.Args[0].(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(a.Value)
			require.NoError(t, err, pos)
			pattern = s
		case *ast.Ident:
			s, ok := consts[a.Name]
			require.True(t, ok, "%s: route pattern %s is not a string constant of the package; teach this test to resolve it", pos, a.Name)
			pattern = s
		default:
			t.Fatalf("%s: cannot resolve the route pattern expression %T; teach this test to resolve it", pos, a)
		}
		r := parsePattern(t, pattern, idempotent, pos)
		if sel, ok := call.Args[1].(*ast.SelectorExpr); ok {
			r.handler = sel.Sel.Name
		}
		out = append(out, r)
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			for _, w := range wrappers {
				if w.lit == x {
					return false // the helper's own registration of its parameter
				}
			}
		case *ast.CallExpr:
			if isRegistration(x) {
				add(x, callsMiddleware(x.Args[1]))
			} else if id, ok := x.Fun.(*ast.Ident); ok && len(x.Args) > 0 {
				if w, ok := wrappers[id.Name]; ok {
					add(x, w.idempotent)
				}
			}
		}
		return true
	})
	return out
}

func isCallTo(e ast.Expr, pkg, fn string) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg && sel.Sel.Name == fn
}

// callsMiddleware reports whether e wraps a handler in X.Middleware(...),
// the idempotency middleware.
func callsMiddleware(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Middleware" {
				found = true
			}
		}
		return !found
	})
	return found
}

var goWildcardRE = regexp.MustCompile(`\{([^}.]*)(\.\.\.)?\}`)

// parsePattern splits a ServeMux pattern "[METHOD ][HOST]/PATH" and turns
// its wildcards into OpenAPI templating: {id} and {path...} become {id}
// and {path}; {$} (end anchor) disappears.
func parsePattern(t *testing.T, pattern string, idempotent bool, pos string) route {
	t.Helper()
	r := route{pattern: pattern, idempotent: idempotent, pos: pos}
	rest := pattern
	if m, p, ok := strings.Cut(strings.TrimSpace(pattern), " "); ok {
		r.method, rest = m, strings.TrimLeft(p, " \t")
	}
	i := strings.IndexByte(rest, '/')
	require.GreaterOrEqual(t, i, 0, "%s: pattern %q has no path", pos, pattern)
	r.path = goWildcardRE.ReplaceAllStringFunc(rest[i:], func(w string) string {
		name := goWildcardRE.FindStringSubmatch(w)[1]
		if name == "$" {
			return ""
		}
		return "{" + name + "}"
	})
	return r
}

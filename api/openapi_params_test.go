package api_test

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenAPIParametersMatchHandlers requires each route's documented
// query and form parameters to be exactly those its handler reads: the
// calendar's URL.Query().Get("name") calls, and the formSpec a payments
// handler binds (which answers parameter_unknown to anything else). Values
// are shapes: scalar, map (metadata[key]) or list (expand[]).
func TestOpenAPIParametersMatchHandlers(t *testing.T) {
	cases := []struct {
		api    string
		file   string
		dir    string
		inCode func(t *testing.T, pkg *goPackage, fn *ast.FuncDecl) map[string]string
	}{
		{"calendar", "calendar.openapi.yaml", "../calendar", queryGets},
		{"payments", "payments.openapi.yaml", "../payments/stripeapi", formSpecParams},
	}
	for _, tc := range cases {
		t.Run(tc.api, func(t *testing.T) {
			d := loadDoc(t, tc.file)
			pkg := loadPackage(t, tc.dir)
			routes := pkg.routes(t)
			require.NotEmpty(t, routes)
			for _, r := range routes {
				if r.path == "/" {
					continue
				}
				require.NotEmpty(t, r.handler, "%s: %q is not registered with a method; teach this test to find its parameters", r.pos, r.pattern)
				fn := pkg.method(r.handler)
				require.NotNil(t, fn, "%s: no method %s", r.pos, r.handler)
				op := d.operation(r.method, r.path)
				require.NotNil(t, op, "%s %s is not documented", r.method, r.path)
				require.Equal(t, tc.inCode(t, pkg, fn), op.documentedInputs(),
					"%q: the parameters %s reads (name: shape) differ from the documented ones", r.pattern, r.handler)
			}
		})
	}
}

// documentedInputs are the query parameters and the properties of a form
// request body, by shape.
func (o docOp) documentedInputs() map[string]string {
	shape := func(schema any) string {
		switch types := schemaTypes(asMap(o.d.resolve(schema))); {
		case slices.Contains(types, "array"):
			return "list"
		case slices.Contains(types, "object"):
			return "map"
		}
		return "scalar"
	}
	out := map[string]string{}
	for _, p := range o.params {
		if p["in"] == "query" {
			out[fmt.Sprint(p["name"])] = shape(p["schema"])
		}
	}
	body := asMap(o.d.resolve(o.op["requestBody"]))
	form := asMap(asMap(body["content"])["application/x-www-form-urlencoded"])
	for name, s := range asMap(asMap(o.d.resolve(form["schema"]))["properties"]) {
		out[name] = shape(s)
	}
	return out
}

// queryGets finds q.Get("name") and r.URL.Query().Get("name") in fn.
func queryGets(t *testing.T, _ *goPackage, fn *ast.FuncDecl) map[string]string {
	t.Helper()
	isQuery := func(e ast.Expr) bool {
		call, ok := e.(*ast.CallExpr)
		if !ok {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Query" && len(call.Args) == 0
	}
	queries := map[string]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok {
			for i, rhs := range as.Rhs {
				if id, ok := as.Lhs[i].(*ast.Ident); ok && isQuery(rhs) {
					queries[id.Name] = true
				}
			}
		}
		return true
	})
	out := map[string]string{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Get" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); !(ok && queries[id.Name]) && !isQuery(sel.X) {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		require.True(t, ok && lit.Kind == token.STRING, "%s: a query parameter name that is not a string literal", fn.Name.Name)
		name, err := strconv.Unquote(lit.Value)
		require.NoError(t, err)
		out[name] = "scalar"
		return true
	})
	return out
}

// formSpecParams finds the one formSpec fn binds, by package variable or
// literal, and returns its parameters.
func formSpecParams(t *testing.T, pkg *goPackage, fn *ast.FuncDecl) map[string]string {
	t.Helper()
	isSpec := func(e ast.Expr) (*ast.CompositeLit, bool) {
		lit, ok := e.(*ast.CompositeLit)
		if !ok {
			return nil, false
		}
		id, ok := lit.Type.(*ast.Ident)
		return lit, ok && id.Name == "formSpec"
	}
	vars := map[string]*ast.CompositeLit{}
	for _, f := range pkg.files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := isSpec(vs.Values[i]); ok {
							vars[name.Name] = lit
						}
					}
				}
			}
		}
	}
	var specs []*ast.CompositeLit
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			if lit, ok := vars[x.Name]; ok {
				specs = append(specs, lit)
			}
		case *ast.CompositeLit:
			if lit, ok := isSpec(x); ok {
				specs = append(specs, lit)
				return false
			}
		}
		return true
	})
	require.Len(t, specs, 1, "%s binds %d formSpecs; the test expects exactly one", fn.Name.Name, len(specs))
	// objects and arrays take nested brackets (payment_intent_data[...],
	// line_items[0][...]): an object and an array in the document.
	shapes := map[string]string{"scalars": "scalar", "maps": "map", "lists": "list", "objects": "map", "arrays": "list"}
	out := map[string]string{}
	for _, elt := range specs[0].Elts {
		kv := elt.(*ast.KeyValueExpr)
		key := kv.Key.(*ast.Ident).Name
		require.Contains(t, shapes, key, "formSpec field %s", key)
		for _, e := range kv.Value.(*ast.CompositeLit).Elts {
			lit, ok := e.(*ast.BasicLit)
			require.True(t, ok && lit.Kind == token.STRING, "formSpec.%s: not a string literal", key)
			name, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			out[name] = shapes[key]
		}
	}
	return out
}

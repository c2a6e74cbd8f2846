package client_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFieldTypes: no field of a type oapi-codegen generated from openapi.json (a
// body, an answer, a parameter), nor a parameter of a generated function (a path
// parameter), is loosely typed: interface{} or any, which decodes
// anything, or float32, which loses digits of a decimal. Field types are followed through
// the file's named types (Email = openapi_types.Email, Uuid = …) to what they are.
//
// It reads openapi.gen.go, or the file PAYMENTS_GENERATED_GO names (.ci/clients points it
// at a client generated with oapi-codegen's defaults, as any user would).
func TestGeneratedFieldTypes(t *testing.T) {
	file := os.Getenv("PAYMENTS_GENERATED_GO")
	if file == "" {
		file = "openapi.gen.go"
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Clean(file), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	loose := looseFields(f)
	for _, l := range loose {
		t.Errorf("%s: %s", fset.Position(l.pos), l.what)
	}
	if len(loose) == 0 {
		// The check must see fields to pass: a file of no structs proves nothing.
		n := 0
		ast.Inspect(f, func(node ast.Node) bool {
			if _, ok := node.(*ast.StructType); ok {
				n++
			}
			return true
		})
		if n < 50 {
			t.Errorf("%s has %d struct types: not the generated client", file, n)
		}
	}
}

// TestLooseFieldsFound: the check finds each loose kind of field, directly and through a
// named type.
func TestLooseFieldsFound(t *testing.T) {
	const src = `package p
type Money = float32
type Anything interface{}
type Fine struct{ A string; B *int64; C []Uuid }
type Uuid = [16]byte
type T struct {
	A any
	B interface{}
	C *float32
	D Money
	E []Anything
	F struct{ G map[string]any }
	H Fine
}
func Get(id Anything, n Uuid) {}`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range looseFields(f) {
		got = append(got, l.what)
	}
	want := []string{"T.A is any", "T.B is interface{}", "T.C is float32", "T.D is float32", "T.E is interface{}", "G is any", "Get(id) is interface{}"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type looseField struct {
	pos  token.Pos
	what string
}

// looseFields returns the fields of f's struct types whose type is, or holds, interface{},
// any or float32.
func looseFields(f *ast.File) []looseField {
	named := map[string]ast.Expr{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				named[ts.Name.Name] = ts.Type
			}
		}
	}
	// loose names what in e is loose, following named types (each once).
	var loose func(e ast.Expr, seen map[string]bool) string
	loose = func(e ast.Expr, seen map[string]bool) string {
		switch x := e.(type) {
		case *ast.Ident:
			switch x.Name {
			case "any", "float32":
				return x.Name
			}
			if t, ok := named[x.Name]; ok && !seen[x.Name] {
				seen[x.Name] = true
				if _, isStruct := t.(*ast.StructType); isStruct {
					return "" // its own fields are checked as a struct of the file
				}
				return loose(t, seen)
			}
		case *ast.InterfaceType:
			if x.Methods == nil || len(x.Methods.List) == 0 {
				return "interface{}"
			}
		case *ast.StarExpr:
			return loose(x.X, seen)
		case *ast.ArrayType:
			return loose(x.Elt, seen)
		case *ast.MapType:
			if l := loose(x.Key, seen); l != "" {
				return l
			}
			return loose(x.Value, seen)
		}
		return "" // a struct's fields are checked where the struct is
	}
	var out []looseField
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok {
			// A function's parameters: the path parameters of the requests.
			for _, p := range fn.Type.Params.List {
				if l := loose(p.Type, map[string]bool{}); l != "" && len(p.Names) > 0 {
					out = append(out, looseField{p.Pos(), fn.Name.Name + "(" + p.Names[0].Name + ") is " + l})
				}
			}
			continue
		}
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			ast.Inspect(ts.Type, func(n ast.Node) bool {
				st, ok := n.(*ast.StructType)
				if !ok {
					return true
				}
				prefix := ""
				if st == ts.Type {
					prefix = ts.Name.Name + "."
				}
				for _, field := range st.Fields.List {
					if l := loose(field.Type, map[string]bool{}); l != "" {
						name := "(embedded)"
						if len(field.Names) > 0 {
							name = field.Names[0].Name
						}
						out = append(out, looseField{field.Pos(), prefix + name + " is " + l})
					}
				}
				return true
			})
		}
	}
	return out
}

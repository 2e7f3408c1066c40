// Package edgerules checks the edge module's source against the rules that
// keep it building and running correctly under TinyGo (the doc of package
// main in the module root, and docs/design.md, "The TinyGo rules"), so that a
// broken rule fails `make test` with the file and line, whichever compiler
// the developer happened to use.
//
// Two rules are checked on every non-test Go file outside tools/:
//
//   - package-level variables are initialised only by constants, literals
//     and errors.New with a literal message (TinyGo evaluates initializers
//     at compile time, and 0.33 got a computed one wrong);
//   - no import of a package TinyGo cannot run in the wasm path
//     (net/http, text/template, html/template, os/exec), unless the file is
//     built only outside wasip1.
package edgerules

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Forbidden lists the imports the wasm path must not use, with the reason
// given when one is found.
var Forbidden = map[string]string{
	"net/http":      "no sockets in Compute; use fsthttp",
	"text/template": "panics at Execute under TinyGo (reflect methods unimplemented)",
	"html/template": "panics at Execute under TinyGo (reflect methods unimplemented)",
	"os/exec":       "no processes in Compute",
}

// Violation is one broken rule at a place in the source.
type Violation struct {
	Pos  token.Position
	Rule string
}

func (v Violation) String() string { return fmt.Sprintf("%s: %s", v.Pos, v.Rule) }

// CheckTree checks every non-test Go file under root, skipping the tools
// module and hidden or generated directories, and says how many it read.
func CheckTree(root string) (files int, _ []Violation, _ error) {
	var out []Violation
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "tools" || name == "bin" || name == "pkg" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		vs, err := CheckFile(path, src)
		out = append(out, vs...)
		return err
	})
	return files, out, err
}

// CheckFile checks one file's source.
func CheckFile(name string, src []byte) ([]Violation, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var out []Violation
	if !nativeOnly(f) {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why, bad := Forbidden[path]; bad {
				out = append(out, Violation{fset.Position(imp.Pos()), fmt.Sprintf("imports %s: %s", path, why)})
			}
		}
	}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, v := range vs.Values {
				if !static(v) {
					name := "_"
					if i < len(vs.Names) {
						name = vs.Names[i].Name
					}
					out = append(out, Violation{fset.Position(v.Pos()), fmt.Sprintf(
						"package-level var %s is computed at init; compute it in a function at first use (TinyGo evaluates initializers at compile time and has got them wrong)", name)})
				}
			}
		}
	}
	return out, nil
}

// nativeOnly reports whether the file's build constraint excludes wasip1.
func nativeOnly(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build") && strings.Contains(c.Text, "!wasip1") {
				return true
			}
		}
	}
	return false
}

// static reports whether an initializer needs no function call other
// than errors.New of a literal.
func static(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit, *ast.Ident, *ast.FuncLit:
		// A function literal is a value, not a call; calling it is a CallExpr.
		return true
	case *ast.SelectorExpr:
		return true // a constant or variable of another package
	case *ast.ParenExpr:
		return static(e.X)
	case *ast.UnaryExpr:
		return static(e.X)
	case *ast.BinaryExpr:
		return static(e.X) && static(e.Y)
	case *ast.KeyValueExpr:
		return static(e.Key) && static(e.Value)
	case *ast.CompositeLit:
		for _, el := range e.Elts {
			if !static(el) {
				return false
			}
		}
		return true
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if !ok || len(e.Args) != 1 {
			return false
		}
		pkg, ok := sel.X.(*ast.Ident)
		_, lit := e.Args[0].(*ast.BasicLit)
		return ok && pkg.Name == "errors" && sel.Sel.Name == "New" && lit
	}
	return false
}

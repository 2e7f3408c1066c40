package layout

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// stages are the edge's files a visitor's request meets, in order.
// handler.go comes first and is not judged: it declares the request's
// state and the platform's ports, which every stage reads.
var stages = []string{"handler.go", "facts.go", "route.go", "line.go", "gate.go", "forward.go", "pages.go"}

// maxFiles bounds the edge's folder (issue 35: no folder of more than 15).
const maxFiles = 15

// edgeDir is package edge's directory, from this package's.
const edgeDir = "../../../edge"

// edgeFiles parses package edge's non-test files.
func edgeFiles(t *testing.T, fset *token.FileSet) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(edgeDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestEdgeFilesAreInTheReadingOrder: the folder holds at most maxFiles
// files, and the package doc names each of them, so a new file is placed
// on the path or beside it.
func TestEdgeFilesAreInTheReadingOrder(t *testing.T) {
	fset := token.NewFileSet()
	files := edgeFiles(t, fset)
	if len(files) > maxFiles {
		t.Errorf("edge has %d files, more than %d: group them by what they serve", len(files), maxFiles)
	}
	var doc string
	for _, f := range files {
		if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package edge") {
			doc = f.Doc.Text()
		}
	}
	if !strings.Contains(doc, "Reading order") {
		t.Fatal("package edge's doc has no reading order")
	}
	for _, f := range files {
		name := filepath.Base(fset.Position(f.Pos()).Filename)
		if !strings.Contains(doc, name) {
			t.Errorf("%s is not named in package edge's reading order", name)
		}
	}
	for _, s := range stages {
		if _, err := os.Stat(filepath.Join(edgeDir, s)); err != nil {
			t.Errorf("stage %s: %v", s, err)
		}
	}
}

// TestEdgeStagesCallDown: no function or method defined in one stage's
// file is called from a later stage's, so the path reads top to bottom.
func TestEdgeStagesCallDown(t *testing.T) {
	fset := token.NewFileSet()
	files := edgeFiles(t, fset)
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("github.com/edgequeue/waitingroom/edge", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{}
	for i, s := range stages {
		rank[s] = i
	}
	back := map[string]bool{}
	for id, obj := range info.Uses {
		fn, ok := obj.(*types.Func)
		if !ok || fn.Pkg() != pkg {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(fn.Pos()).Filename)
		rf, okFrom := rank[from]
		rt, okTo := rank[to]
		if okFrom && okTo && rt > 0 && rt < rf {
			back[from+" calls "+fn.Name()+" of "+to+", a stage before it"] = true
		}
	}
	var found []string
	for b := range back {
		found = append(found, b)
	}
	sort.Strings(found)
	for _, b := range found {
		t.Error(b)
	}
}

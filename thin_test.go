package aiperf_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A command package under lib/cmd parses flags and calls a library: its
// logic lives in lib/... where a Go test reaches it without a process.
// These bounds keep it so.
const (
	maxCmdFileLines = 300
	maxCmdFuncLines = 60
)

// thinExempt lists what broke the bounds when they were set: files over
// maxCmdFileLines (a path) and functions over maxCmdFuncLines ("path:Func",
// "path:Type.Method"; a function literal counts toward the function that
// holds it). It may only shrink: move the logic into a library and delete
// the line. None is left: every command package keeps the bounds.
var thinExempt = []string{}

func TestCmdIsThin(t *testing.T) {
	got := thinViolations(t, "lib/cmd")
	for _, v := range got {
		if !slices.Contains(thinExempt, v.name) {
			t.Errorf("%s: %s (lib/cmd parses flags and calls a library: move the logic down)", v.name, v.what)
		}
	}
	for _, e := range thinExempt {
		if !slices.ContainsFunc(got, func(v thinViolation) bool { return v.name == e }) {
			// Not an error: a branch that slims a listed package should
			// not break the build of one merged beside it.
			t.Logf("thinExempt lists %s, which keeps the bounds now: delete its line", e)
		}
	}
}

type thinViolation struct{ name, what string }

// thinViolations parses every non-test Go file under root and returns the
// files over maxCmdFileLines and the functions over maxCmdFuncLines.
func thinViolations(t *testing.T, root string) []thinViolation {
	var bad []thinViolation
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(path)
		if n := fset.File(f.Pos()).LineCount(); n > maxCmdFileLines {
			bad = append(bad, thinViolation{rel, fmt.Sprintf("%d lines, more than %d", n, maxCmdFileLines)})
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if n > maxCmdFuncLines {
				bad = append(bad, thinViolation{rel + ":" + funcName(fn), fmt.Sprintf("%d lines, more than %d", n, maxCmdFuncLines)})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// funcName is Func, or Type.Method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if g, ok := typ.(*ast.IndexExpr); ok {
		typ = g.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// TestThinRules feeds the walk a file that breaks both bounds.
func TestThinRules(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("package x\n\nfunc (r *T) long() {\n")
	for range maxCmdFileLines {
		b.WriteString("\t_ = 1\n")
	}
	b.WriteString("}\n\nfunc short() {}\n")
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := thinViolations(t, dir)
	base := filepath.ToSlash(filepath.Join(dir, "x.go"))
	if len(got) != 2 || got[0].name != base || got[1].name != base+":T.long" {
		t.Errorf("got %+v", got)
	}
}

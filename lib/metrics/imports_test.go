package metrics

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package's layering: the standard library,
// lib/result and lib/jsonx (the JSON scanner and escaper lib/result uses
// already) only (the replayer adapts to metrics, not the other way), and
// never the network.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(p, "/")
			switch {
			case p == "github.com/aiperf/toolkit/lib/result", p == "github.com/aiperf/toolkit/lib/jsonx":
			case strings.HasPrefix(p, "net"):
				t.Errorf("%s imports %s: metrics never touches the network", f, p)
			case strings.Contains(first, "."):
				t.Errorf("%s imports %s: only the standard library, lib/result and lib/jsonx are allowed", f, p)
			}
		}
	}
}

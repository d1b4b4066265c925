package aiperf_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsChecked are the pages whose code spans are held to the tree: a path
// or a Go name they quote must exist, so the page cannot go on describing
// code that was renamed or removed.
var docsChecked = []string{"docs/design.md"}

// A code span is a path when it starts with one of the tree's top folders
// or ends in .go; it may be a glob (lib/store/testdata/v1-*.aipk), which
// must match something.
var pathSpan = regexp.MustCompile(`^(lib|cmd|scripts|docs|testdata|deploy|examples)/[^\s]*$|^[\w./-]+\.go$`)

var placeholder = regexp.MustCompile(`<[^>]*>`)

// A code span is a Go name when it is package.Name, package.Type.Method or
// either followed by a call's parentheses (replay.NewPlan(store, Options)),
// where package is one of lib's packages. A lower-case name is checked
// only in a command package (replaycmd.aiperfInputConfig): elsewhere
// tokenizer.json is a file, not a name.
var goSpan = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Za-z_]\w*)(?:\.([A-Z]\w*))?(?:\(.*\))?$`)

func TestDocsNameWhatExists(t *testing.T) {
	pkgs := libPackages(t)
	for _, doc := range docsChecked {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, span := range codeSpans(line) {
				if why := checkSpan(span, pkgs); why != "" {
					t.Errorf("%s:%d: `%s`: %s", doc, i+1, span, why)
				}
			}
		}
	}
}

// codeSpans returns the single-backtick spans of a Markdown line.
func codeSpans(line string) []string {
	var out []string
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		if i+1 < len(parts) || strings.HasSuffix(line, "`") {
			out = append(out, parts[i])
		}
	}
	return out
}

func checkSpan(span string, pkgs map[string]*goPackage) string {
	if pathSpan.MatchString(span) {
		// a placeholder (cmd/<binary>/main.go) stands for any name
		name := placeholder.ReplaceAllString(strings.TrimSuffix(span, "/"), "*")
		if strings.ContainsAny(name, "*?[") {
			if m, _ := filepath.Glob(name); len(m) == 0 {
				return "no file matches it"
			}
			return ""
		}
		if !strings.Contains(name, "/") {
			return "" // a bare file name (sse.go): which folder is the prose's to say
		}
		if _, err := os.Stat(name); err != nil {
			return "no such file or folder"
		}
		return ""
	}
	m := goSpan.FindStringSubmatch(span)
	if m == nil {
		return ""
	}
	p := pkgs[m[1]]
	if p == nil {
		return ""
	}
	name, method := m[2], m[3]
	if !ast.IsExported(name) && !strings.HasSuffix(m[1], "cmd") {
		return ""
	}
	if method != "" {
		if !p.methods[name+"."+method] {
			return "no method " + method + " on " + name + " in " + p.dir
		}
		return ""
	}
	if !p.decls[name] && !p.methods[name] {
		return "no " + name + " declared in " + p.dir
	}
	return ""
}

type goPackage struct {
	dir     string
	decls   map[string]bool // top-level funcs, types, vars and consts
	methods map[string]bool // "Type.Method"
}

// libPackages parses every package under lib/ (tests left out), by name.
func libPackages(t *testing.T) map[string]*goPackage {
	t.Helper()
	out := map[string]*goPackage{}
	fset := token.NewFileSet()
	err := filepath.WalkDir("lib", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := f.Name.Name
		if name == "main" {
			return nil
		}
		p := out[name]
		if p == nil {
			p = &goPackage{dir: filepath.Dir(path), decls: map[string]bool{}, methods: map[string]bool{}}
			out[name] = p
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					p.decls[d.Name.Name] = true
					continue
				}
				if recv := recvType(d.Recv.List[0].Type); recv != "" {
					p.methods[recv+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						p.decls[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, f := range st.Fields.List {
								for _, n := range f.Names {
									p.methods[s.Name.Name+"."+n.Name] = true // a field reads as one
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							p.decls[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.IndexExpr:
		return recvType(e.X)
	case *ast.IndexListExpr:
		return recvType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// TestDocsCheckCatches keeps the check honest: a renamed function, a
// missing file and an unmatched glob are each reported.
func TestDocsCheckCatches(t *testing.T) {
	pkgs := libPackages(t)
	for _, span := range []string{"store.NoSuchOpen", "replaycmd.noSuchHelper", "lib/store/nosuch.go",
		"lib/store/testdata/v9-*.aipk", "store.Reader.NoSuchMethod", "cmd/<binary>/nosuch.go"} {
		if checkSpan(span, pkgs) == "" {
			t.Errorf("`%s` passed the check", span)
		}
	}
	for _, span := range []string{"store.Open", "lib/store/format.go", "tokenizer.json", "--model", "lib/store/testdata/v1-*.aipk", "cmd/<binary>/main.go"} {
		if why := checkSpan(span, pkgs); why != "" {
			t.Errorf("`%s`: %s", span, why)
		}
	}
}

// readmeMaxLines keeps the README a guide: the reference of each binary
// is its page in docs/, the benchmarks' figures docs/bench.md.
const readmeMaxLines = 800

func TestReadmeIsAGuide(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move reference text to docs/", n, readmeMaxLines)
	}
}

// mdLink is an inline Markdown link or image: [text](target) or
// [text](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestDocsLinksResolve: every relative link in README.md and docs/*.md
// names a file or folder that exists (anchors are not checked).
func TestDocsLinksResolve(t *testing.T) {
	pages, _ := filepath.Glob("docs/*.md")
	for _, page := range append([]string{"README.md"}, pages...) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, target := range markdownLinks(string(b)) {
			if why := checkLink(page, target); why != "" {
				t.Errorf("%s: link %d (%s): %s", page, i+1, target, why)
			}
		}
	}
}

// markdownLinks returns the targets of the inline links outside code
// (fenced blocks and backticked spans).
func markdownLinks(text string) []string {
	var out []string
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		parts := strings.Split(line, "`")
		for i := 0; i < len(parts); i += 2 {
			for _, m := range mdLink.FindAllStringSubmatch(parts[i], -1) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// checkLink says what is wrong with a link's target, relative to the page
// it is on; absolute URLs and bare anchors are not checked.
func checkLink(page, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
		return ""
	}
	name, _, _ := strings.Cut(target, "#")
	if strings.HasPrefix(name, "/") {
		return "an absolute path: links are relative to the page"
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(page), filepath.FromSlash(name))); err != nil {
		return "no such file or folder"
	}
	return ""
}

func TestDocsLinkCheckCatches(t *testing.T) {
	got := markdownLinks("see [a](docs/a.md#x) and `[b](no.md)`, [c](https://x/y) ![i](img.png \"t\")\n```\n[d](fenced.md)\n```\n")
	if strings.Join(got, " ") != "docs/a.md#x https://x/y img.png" {
		t.Errorf("links: %q", got)
	}
	for _, c := range []struct{ page, target string }{{"README.md", "docs/nosuch.md"}, {"docs/pack.md", "pack.md/../nosuch.md"}, {"docs/pack.md", "docs/pack.md"}, {"README.md", "/etc/passwd"}} {
		if checkLink(c.page, c.target) == "" {
			t.Errorf("%s -> %s passed the check", c.page, c.target)
		}
	}
	for _, c := range []struct{ page, target string }{{"README.md", "docs/pack.md#endpoints"}, {"docs/pack.md", "../README.md"}, {"docs/pack.md", "bench.md"}, {"README.md", "#exit-codes"}, {"README.md", "https://example.com/nosuch"}} {
		if why := checkLink(c.page, c.target); why != "" {
			t.Errorf("%s -> %s: %s", c.page, c.target, why)
		}
	}
}

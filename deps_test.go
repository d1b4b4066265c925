package aiperf_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// The layering every package of the module keeps (checked from `go list`,
// which sees the build's real import graph, transitive imports included):
//
//   - github.com/urfave/cli/v2 is imported only under lib/cmd and cmd: the
//     libraries and scripts never see a flag.
//   - net/http is imported only by the stages that talk HTTP: lib/replay and
//     lib/mock, lib/servermetrics (it scrapes /metrics), their command
//     packages and binaries, the replay benchmark's bare reference client
//     (scripts/bench/replaybench) and the memory check's hostile server
//     (scripts/membound).
//   - cmd/aiperf-<x> imports lib/cmd/base and exactly one lib/cmd/<x>cmd,
//     and nothing else of the module.
//   - Libraries (lib/..., outside lib/cmd) never import lib/cmd.
const (
	module = "github.com/aiperf/toolkit"
	cliPkg = "github.com/urfave/cli/v2"
)

// httpAllowed are the module packages (relative paths) that may depend on
// net/http.
var httpAllowed = []string{
	"lib/replay", "lib/mock", "lib/servermetrics",
	"lib/cmd/replaycmd", "lib/cmd/mockcmd",
	"cmd/aiperf-replay", "cmd/aiperf-mock",
	"scripts/bench/replaybench", "scripts/membound",
}

// pkgInfo is a module package: its path relative to the module root, its
// direct imports and its transitive dependencies.
type pkgInfo struct {
	rel     string
	imports []string
	deps    []string
}

func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := parseList(t, out)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, v := range layeringViolations(pkgs) {
		t.Error(v)
	}
}

// TestLayeringRules feeds the rules a graph that breaks each of them.
func TestLayeringRules(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	bad := []pkgInfo{
		{rel: "lib/store", deps: []string{cliPkg}},
		{rel: "scripts/genrecords", deps: []string{cliPkg}},
		{rel: "lib/pack", deps: []string{"net/http"}},
		{rel: "lib/trace", deps: []string{m("lib/cmd/base")}},
		{rel: "cmd/aiperf-pack", imports: []string{"os", m("lib/cmd/base"), m("lib/cmd/packcmd"), m("lib/cmd/tokenizecmd")}},
		{rel: "cmd/aiperf-hash", imports: []string{"os", m("lib/cmd/packcmd")}},
	}
	ok := []pkgInfo{
		{rel: "lib/cmd/packcmd", deps: []string{cliPkg}},
		{rel: "lib/replay", deps: []string{"net/http"}},
		{rel: "cmd/aiperf-replay", imports: []string{"os", m("lib/cmd/base"), m("lib/cmd/replaycmd")}, deps: []string{cliPkg, "net/http"}},
	}
	got := layeringViolations(append(bad, ok...))
	if len(got) != len(bad) {
		t.Fatalf("got %d violations, want %d:\n%s", len(got), len(bad), strings.Join(got, "\n"))
	}
	for i, b := range bad {
		if !strings.HasPrefix(got[i], b.rel+": ") {
			t.Errorf("violation %d is %q, want one about %s", i, got[i], b.rel)
		}
	}
}

func parseList(t *testing.T, out []byte) []pkgInfo {
	var pkgs []pkgInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			t.Fatalf("go list line %q", sc.Text())
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")
		pkgs = append(pkgs, pkgInfo{rel: rel, imports: strings.Fields(f[1]), deps: strings.Fields(f[2])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func under(rel string, dirs ...string) bool {
	for _, d := range dirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// layeringViolations returns one message per broken rule, in package order.
func layeringViolations(pkgs []pkgInfo) []string {
	var bad []string
	for _, p := range pkgs {
		cmdLayer := under(p.rel, "lib/cmd", "cmd")
		switch {
		case !cmdLayer && slices.Contains(p.deps, cliPkg):
			bad = append(bad, p.rel+": depends on "+cliPkg+" (only lib/cmd/... and cmd/... may)")
		case slices.Contains(p.deps, "net/http") && !under(p.rel, httpAllowed...):
			bad = append(bad, p.rel+": depends on net/http (only "+strings.Join(httpAllowed, ", ")+" may)")
		case under(p.rel, "lib") && !cmdLayer && slices.ContainsFunc(p.deps, func(d string) bool { return strings.HasPrefix(d, module+"/lib/cmd/") }):
			bad = append(bad, p.rel+": a library depends on lib/cmd")
		case under(p.rel, "cmd"):
			if msg := checkMain(p); msg != "" {
				bad = append(bad, p.rel+": "+msg)
			}
		}
	}
	return bad
}

// checkMain checks that cmd/aiperf-<x> imports base and <x>cmd and no other
// module package.
func checkMain(p pkgInfo) string {
	x := strings.TrimPrefix(path.Base(p.rel), "aiperf-")
	want := []string{module + "/lib/cmd/base", module + "/lib/cmd/" + x + "cmd"}
	var got []string
	for _, imp := range p.imports {
		if strings.HasPrefix(imp, module+"/") {
			got = append(got, imp)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return "imports " + strings.Join(got, ", ") + "; want exactly " + strings.Join(want, " and ")
	}
	return ""
}

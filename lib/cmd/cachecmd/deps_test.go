package cachecmd

import (
	"os/exec"
	"strings"
	"testing"
)

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// TestDeps keeps aiperf-cache free of HTTP (only replay talks to servers) and
// lib/cachedir free of everything but the standard library and the module's
// own file toolbox (lib/internal/..., which needs golang.org/x/sys for flock):
// aiperf-hash imports it to find its memo, and links nothing more for it.
func TestDeps(t *testing.T) {
	for _, p := range goList(t, "-deps", "-tags", "urfave_cli_no_docs", "github.com/aiperf/toolkit/cmd/aiperf-cache") {
		if p == "net/http" || strings.HasPrefix(p, "net/http/") {
			t.Errorf("aiperf-cache depends on %s", p)
		}
	}
	for _, p := range goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/aiperf/toolkit/lib/cachedir") {
		if p != "github.com/aiperf/toolkit/lib/cachedir" && !strings.HasPrefix(p, "github.com/aiperf/toolkit/lib/internal/") && !strings.HasPrefix(p, "golang.org/x/sys/") {
			t.Errorf("lib/cachedir depends on %s, outside the standard library and lib/internal", p)
		}
	}
}

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
// lib/cachedir free of everything but the standard library (aiperf-hash
// imports it to find its memo).
func TestDeps(t *testing.T) {
	for _, p := range goList(t, "-deps", "-tags", "urfave_cli_no_docs", "github.com/aiperf/toolkit/cmd/aiperf-cache") {
		if p == "net/http" || strings.HasPrefix(p, "net/http/") {
			t.Errorf("aiperf-cache depends on %s", p)
		}
	}
	for _, p := range goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/aiperf/toolkit/lib/cachedir") {
		if p != "github.com/aiperf/toolkit/lib/cachedir" {
			t.Errorf("lib/cachedir depends on %s, outside the standard library", p)
		}
	}
}

package aiperf_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// leanBans lists, per binary, module packages it must not link: each
// would grow it (the builtin tokenizer is 1.6 MB of embedded data) or
// drag in a stage it has no use for.
var leanBans = map[string][]string{
	// aiperf-pack formats records that aiperf-tokenize made: it reads no
	// trace and loads no tokenizer (aiperf-tokenize's settings live in
	// lib/cmd/stagekey/tokenizekey, the builtin tokenizer's identity in
	// lib/tokenizer/identity).
	"cmd/aiperf-pack": {"lib/trace", "lib/tokenizer/builtin", "lib/tokenizer", "lib/ingest", "lib/cmd/stagekey/tokenizekey"},
	// aiperf-cache stores and restores files: no stage, no tokenizer.
	"cmd/aiperf-cache": {"lib/ingest", "lib/tokenizer", "lib/tokenizer/builtin", "lib/pack", "lib/replay", "lib/trace"},
}

func TestLeanBinaries(t *testing.T) {
	for bin, bans := range leanBans {
		out, err := exec.Command("go", "list", "-deps", "./"+bin).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", bin, err)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, module+"/"+bin) {
			t.Fatalf("go list -deps %s does not list it", bin)
		}
		for _, b := range bans {
			if slices.Contains(deps, module+"/"+b) {
				t.Errorf("%s links %s", bin, b)
			}
		}
	}
}

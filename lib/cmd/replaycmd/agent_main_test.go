package replaycmd

import (
	"os"
	"testing"

	"github.com/aiperf/toolkit/lib/cmd/base"
)

// The test binary doubles as aiperf-replay's scrape agent: a run in these
// tests starts os.Executable() with "scrape-agent" as its first argument.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "scrape-agent" {
		os.Exit(base.Main(New(), os.Args))
	}
	os.Exit(m.Run())
}

package cachecmd

import (
	"os"
	"testing"
)

// soak reports whether the process-level stress tests (ensure beside
// removals, SIGKILL crash safety) run at their full counts: `make
// test-soak` sets AIPERF_SOAK=1. make test runs them at a third so that
// they leave the two cores to the testscripts; the windows they guard
// failed a few runs in 150 before their fixes, so a regression is caught
// for sure only at the full counts.
func soak(t *testing.T) bool {
	return os.Getenv("AIPERF_SOAK") == "1" && !testing.Short()
}

package replay

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/aiperf/toolkit/lib/result"
)

// clockState asks the kernel (adjtimex(2), reading only) whether NTP or
// PTP holds the clock and how far off it may be. nil when it will not say.
func clockState() *result.ClockInfo {
	var t unix.Timex // Modes 0: read, change nothing
	state, err := unix.Adjtimex(&t)
	if err != nil {
		return nil
	}
	return &result.ClockInfo{
		Synced:     state != unix.TIME_ERROR && t.Status&unix.STA_UNSYNC == 0,
		MaxErrorUS: max(int64(t.Maxerror), 0), // older kernels took a negative one from root
	}
}

// bootID is the kernel's boot id: the same for every container on one
// kernel, different on every machine and every boot ("" when unreadable).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

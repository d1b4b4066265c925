package replay

import (
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
		MaxErrorUS: int64(t.Maxerror),
	}
}

package term

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPTY: both ends of a pseudo-terminal are terminals.
func TestPTY(t *testing.T) {
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	defer ptm.Close()
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal: %v", err)
	}
	defer pts.Close()
	if !Is(pts) {
		t.Errorf("Is(/dev/pts/%d) = false, want true", n)
	}
	if !Is(ptm) {
		t.Error("Is(/dev/ptmx) = false, want true")
	}
}

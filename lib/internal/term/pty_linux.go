package term

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// OpenPTY opens a new pseudo-terminal and returns its terminal end (what a
// program's stdin or stdout would be) and its controlling end; closing the
// controlling end hangs the terminal up, so a read of it then fails. For
// tests of what a command does at a terminal.
func OpenPTY() (tty, ptm *os.File, err error) {
	ptm, err = os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fail := func(what string, err error) (*os.File, *os.File, error) {
		ptm.Close()
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		return fail("unlockpt", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		return fail("ptsname", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return fail("open the terminal", err)
	}
	return tty, ptm, nil
}

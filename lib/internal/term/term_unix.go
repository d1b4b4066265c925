//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package term

import "golang.org/x/sys/unix"

func isTerminal(f fder) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), getTermios)
	return err == nil
}

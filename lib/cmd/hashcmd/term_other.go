//go:build !linux

package hashcmd

import (
	"os"

	"github.com/aiperf/toolkit/lib/cmd/base"
)

// isTerminal reports whether f is a terminal (a character device, here).
func isTerminal(f *os.File) bool { return base.IsTerminal(f) }

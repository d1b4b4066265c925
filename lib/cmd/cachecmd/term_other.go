//go:build !linux

package cachecmd

import (
	"io"

	"github.com/aiperf/toolkit/lib/cmd/base"
)

func isTerminal(w io.Writer) bool { return base.IsTerminal(w) }

//go:build !linux

package pace

import "runtime"

func newFineTimer() fineTimer { return nil }

func yield() { runtime.Gosched() }

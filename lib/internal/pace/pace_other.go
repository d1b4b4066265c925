//go:build !linux

package pace

import (
	"runtime"
	"time"
)

// LockThread wires the calling goroutine to its OS thread.
func LockThread() { runtime.LockOSThread() }

// UnlockThread undoes LockThread.
func UnlockThread() { runtime.UnlockOSThread() }

func nap(d time.Duration) { time.Sleep(d) }

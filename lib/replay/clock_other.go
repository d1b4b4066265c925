//go:build !linux

package replay

import "github.com/aiperf/toolkit/lib/result"

// clockState is unknown off Linux.
func clockState() *result.ClockInfo { return nil }

// bootID is unknown off Linux.
func bootID() string { return "" }

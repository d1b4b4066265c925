//go:build !linux

package replaycmd

import "syscall"

// agentProcAttr: without Linux's parent-death signal the agent ends when
// its stdin does (the run's process gone).
func agentProcAttr() *syscall.SysProcAttr { return nil }

// lowerPriority is a no-op off Linux.
func lowerPriority() {}

//go:build !linux

package cachecmd

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }

// guardProcAttr is nil: without a parent-death signal a guard is no use.
func guardProcAttr() *syscall.SysProcAttr { return nil }

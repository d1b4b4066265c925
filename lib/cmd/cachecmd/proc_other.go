//go:build !linux

package cachecmd

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }

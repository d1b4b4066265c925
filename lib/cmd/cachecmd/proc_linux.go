package cachecmd

import "syscall"

// sysProcAttr makes CMD die with its parent (ensure, or ensure's guard): a
// SIGKILLed ensure must not leave a builder writing into a staging folder
// nobody will publish.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// guardProcAttr is for ensure's guard (guard.go): SIGHUP when ensure dies,
// which the guard catches to stop CMD's whole process group.
func guardProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGHUP} }

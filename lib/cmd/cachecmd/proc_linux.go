package cachecmd

import "syscall"

// sysProcAttr makes CMD die with ensure: a SIGKILLed ensure must not leave a
// builder writing into a staging folder nobody will publish.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

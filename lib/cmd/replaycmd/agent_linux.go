package replaycmd

import (
	"os"
	"strconv"
	"syscall"
)

// agentProcAttr puts the scrape agent in a process group of its own (a
// terminal's ^C goes to the run, which decides when the agent stops) and
// has the kernel kill it when the run's process dies.
func agentProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// agentNice is the scrape agent's nice value: a core the sender wants goes
// to the sender.
const agentNice = 10

// lowerPriority lowers the process's priority to agentNice (best effort).
// Linux keeps a nice value per thread, and a new thread takes its
// creator's: every thread the runtime has started is lowered, twice over
// in case one was being created meanwhile.
func lowerPriority() {
	for range 2 {
		tasks, _ := os.ReadDir("/proc/self/task")
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				syscall.Setpriority(syscall.PRIO_PROCESS, tid, agentNice)
			}
		}
	}
}

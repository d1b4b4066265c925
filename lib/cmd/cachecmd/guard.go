package cachecmd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/urfave/cli/v2"
)

// A SIGKILLed ensure must not leave CMD's processes running, writing into a
// staging folder nobody will publish. Neither kernel mechanism does it
// alone for `sh -c 'a | b'`: PR_SET_PDEATHSIG signals only a direct child
// when its parent dies (the setting is cleared in every child it forks, so
// a and b never have it), and a subreaper (PR_SET_CHILD_SUBREAPER) adopts
// orphaned grandchildren only while it lives, which a SIGKILLed ensure does
// not. So ensure runs CMD under a guard: itself again, in the hidden
// command below, as its direct child with SIGHUP as its parent-death
// signal. The guard leads CMD's process group (unless stdin is a terminal,
// see run); when ensure dies, however it dies, the kernel sends it SIGHUP
// and it stops the whole group: SIGTERM, then SIGKILL after guardGrace.

// guardName is the hidden command that runs CMD for ensure.
const guardName = "__ensure-guard"

// guardGrace is how long the guard waits, after SIGTERM, for CMD's group to
// stop before it kills it (as ensure's own WaitDelay).
const guardGrace = 10 * time.Second

// guardCommand: aiperf-cache __ensure-guard GROUP OUT KEY CMD [ARGS...].
// OUT and KEY become CMD's $AIPERF_CACHE_OUT and $AIPERF_CACHE_KEY (the
// guard's own environment does not carry them); GROUP is 1 when the guard
// leads a process group of its own.
func guardCommand() *cli.Command {
	return &cli.Command{
		Name:            guardName,
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) < 4 {
				return base.UsageError("%s: want GROUP OUT KEY CMD [ARGS...]", guardName)
			}
			return guard(c, args[0] == "1", args[1], args[2], args[3:])
		},
	}
}

func guard(c *cli.Context, group bool, out, key string, argv []string) error {
	// Registered before CMD starts: were ensure to die before this line,
	// SIGHUP's default action would end the guard with nothing started.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	// The group's SIGTERM reaches the guard as well: that one (and a second)
	// must not end the guard before CMD is stopped.
	base.SecondSignal(c.Context)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), OutEnv+"="+out, "AIPERF_CACHE_KEY="+key)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.App.Reader, c.App.Writer, c.App.ErrWriter
	cmd.SysProcAttr = sysProcAttr() // dies with the guard, should the guard be killed
	runtime.LockOSThread()          // the parent-death signal follows the forking thread
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(c.App.ErrWriter, "%s: ensure: %v\n", c.App.Name, err)
		return &base.Error{Code: 127}
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	signal := func(sig syscall.Signal) {
		if group {
			syscall.Kill(0, sig) // the guard's group: CMD and everything it started
		} else {
			cmd.Process.Signal(sig)
		}
	}
	var err error
	select {
	case err = <-exited:
	case <-hup: // ensure is gone
		signal(syscall.SIGTERM)
		err = waitOrKill(exited, signal)
	case <-c.Context.Done(): // SIGTERM or SIGINT (ensure stopping CMD's group)
		err = waitOrKill(exited, signal)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &base.Error{Code: exitStatus(ee)}
	}
	if err != nil {
		return err
	}
	return nil
}

// waitOrKill waits up to guardGrace for CMD to exit, then kills it.
func waitOrKill(exited chan error, signal func(syscall.Signal)) error {
	select {
	case err := <-exited:
		return err
	case <-time.After(guardGrace):
		signal(syscall.SIGKILL)
		return <-exited
	}
}

package base

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/urfave/cli/v2"
)

// notifyContext returns a context that SIGINT, SIGTERM and SIGHUP cancel
// (a closed terminal or a dropped ssh session stops a run as ^C does, its
// results kept; under nohup, which ignores SIGHUP, it stays ignored): the first
// signal asks the command to stop cleanly (it returns, removes its temporary
// files and exits 130). A second signal stops a command that is stuck, for
// example blocked reading a silent stdin: it removes the process's temporary
// files (atomicfile.RemoveTemps) and exits 130 at once, unless the command
// asked for it with SecondSignal; then a third signal does that.
func notifyContext(app *cli.App) (context.Context, func()) {
	st := &signals{cut: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), signalsKey{}, st))
	sig := make(chan os.Signal, 3)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	if !signal.Ignored(syscall.SIGHUP) {
		signal.Notify(sig, syscall.SIGHUP)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
			cancel()
		case <-done:
			return
		}
		for {
			select {
			case <-sig:
				if st.claim() {
					continue // the command cuts its work short and still writes its outputs
				}
				atomicfile.RemoveTemps()
				fmt.Fprintf(app.ErrWriter, "%s: interrupted\n", app.Name)
				os.Exit(ExitInterrupted)
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}

// signals is what a command run by Main shares with its signal handler.
type signals struct {
	mu      sync.Mutex
	wanted  bool // the command handles the second signal (SecondSignal)
	claimed bool // the second signal came and was handed to it
	cut     chan struct{}
}

type signalsKey struct{}

// claim hands a signal after the first to the command, once: true when it
// was (the cut channel is closed now), false when the process should exit.
func (s *signals) claim() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.wanted || s.claimed {
		return false
	}
	s.claimed = true
	close(s.cut)
	return true
}

// SecondSignal is for a command whose clean stop takes a while (replay's
// grace period for requests in flight): it returns a channel that a second
// SIGINT or SIGTERM closes, instead of exiting at once, so the command can
// cut that wait short and still write its outputs; a third signal exits at
// once. Outside Main (a context without its signal handler) it returns nil,
// a channel that never closes.
func SecondSignal(ctx context.Context) <-chan struct{} {
	st, ok := ctx.Value(signalsKey{}).(*signals)
	if !ok {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.wanted = true
	return st.cut
}

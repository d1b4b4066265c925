package servermetrics

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// The scrape agent is a process of its own that scrapes the targets and
// appends every scrape to the run's JSONL stream, so that fetching and
// parsing pages (which allocate, and so run the garbage collector) happen
// outside the process that sends the requests. Its protocol, on its stdin
// and stdout:
//
//	agent → "ready\n"           after the scrape before the first send
//	parent → "stop\n" (or EOF)  after the last answer
//	agent → one JSON line       after the last scrape: []AgentStats
//
// then it exits 0 (1 when the stream could not be written).
const agentReady = "ready"

// RunAgent is the agent's side: it scrapes o.Targets into o.JSONL (keeping
// nothing in memory), says it is ready, and scrapes until a line or the end
// of in; then it scrapes a last time and writes its stats to out. The
// scrapes go on when ctx is cancelled until in says stop: the parent
// decides when the run ends.
func RunAgent(o Options, in io.Reader, out io.Writer) error {
	o.Discard = true
	ctx := context.Background()
	c := Start(ctx, o)
	if _, err := fmt.Fprintln(out, agentReady); err != nil {
		c.Stop(ctx)
		return err
	}
	br := bufio.NewReader(in)
	br.ReadString('\n') // a line, EOF or an error: all say stop
	werr := c.Stop(ctx)
	b, err := json.Marshal(c.AgentStats())
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(out, "%s\n", b); err != nil {
		return err
	}
	return werr
}

// Agent is the parent's handle on a running scrape agent.
type Agent struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string   // the agent's stdout, line by line; closed at its end
	exited chan struct{} // closed when the agent has exited
	err    error         // its exit status, once exited
}

// StartAgent starts cmd (whose stdin and stdout must be unset) and waits up
// to timeout for its first scrape. On failure the agent is killed.
func StartAgent(cmd *exec.Cmd, timeout time.Duration) (*Agent, error) {
	a := &Agent{cmd: cmd, lines: make(chan string, 4), exited: make(chan struct{})}
	var err error
	if a.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// Wait closes stdout once the process is gone, so reading stdout to its
	// end first and waiting after is the order os/exec asks for.
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
		close(a.lines)
		a.err = cmd.Wait()
		close(a.exited)
	}()
	select {
	case l, ok := <-a.lines:
		if ok && l == agentReady {
			return a, nil
		}
		a.Kill()
		if !ok {
			return nil, fmt.Errorf("it ended before its first scrape (%v)", a.err)
		}
		return nil, fmt.Errorf("it said %q, not %q", trim(l), agentReady)
	case <-time.After(timeout):
		a.Kill()
		return nil, fmt.Errorf("no first scrape within %v", timeout)
	}
}

// Pid is the agent's process id.
func (a *Agent) Pid() int { return a.cmd.Process.Pid }

// Stop asks for the last scrape and waits up to timeout for the agent to
// end. It returns the agent's stats, or why there are none (the agent died
// or hung: it is killed; the JSONL stream holds what it wrote before).
func (a *Agent) Stop(timeout time.Duration) ([]AgentStats, error) {
	io.WriteString(a.stdin, "stop\n")
	a.stdin.Close()
	deadline := time.After(timeout)
	var stats []AgentStats
	var perr error
	for got := false; !got; {
		select {
		case l, ok := <-a.lines:
			if !ok {
				got = true
				break
			}
			if stats == nil && perr == nil {
				if err := json.Unmarshal([]byte(l), &stats); err != nil {
					perr = fmt.Errorf("it said %q", trim(l))
				}
			}
		case <-deadline:
			a.Kill()
			return nil, fmt.Errorf("it did not end within %v after the last answer, and was killed", timeout)
		}
	}
	<-a.exited
	switch {
	case a.err != nil:
		return nil, fmt.Errorf("it ended badly (%v)", a.err)
	case perr != nil:
		return nil, perr
	case stats == nil:
		return nil, errors.New("it ended without its stats")
	}
	return stats, nil
}

// Kill ends the agent at once and waits for it to be gone.
func (a *Agent) Kill() {
	a.stdin.Close()
	a.cmd.Process.Kill()
	for range a.lines {
	}
	<-a.exited
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return strings.TrimSpace(s)
}

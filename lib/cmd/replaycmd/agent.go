package replaycmd

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/aiperf/toolkit/lib/servermetrics"
	"github.com/urfave/cli/v2"
)

// agentEnv marks a scrape agent's environment: an agent (or a test binary
// started as one by mistake) never starts another.
const agentEnv = "AIPERF_REPLAY_SCRAPE_AGENT"

// scrapeAgentCommand is the hidden "scrape-agent" subcommand: the process
// a run scrapes /metrics in (servermetrics.RunAgent), so that fetching and
// parsing pages never takes the sending process's CPU or its garbage
// collector's time. It appends to the JSONL stream open on fd 3.
func scrapeAgentCommand() *cli.Command {
	var interval string
	return &cli.Command{
		Name:      "scrape-agent",
		Hidden:    true,
		Usage:     "(internal) scrape the /metrics URLs for a run into the JSONL stream open on fd 3",
		ArgsUsage: "URL...",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "interval", Value: "1s", Destination: &interval}},
		Action: func(c *cli.Context) error {
			d, err := duration("--interval", interval)
			if err != nil {
				return err
			}
			lowerPriority()
			f := os.NewFile(3, servermetrics.JSONLFile)
			if f == nil {
				return errors.New("no JSONL stream on fd 3")
			}
			o := servermetrics.Options{Targets: c.Args().Slice(), Interval: d, JSONL: f}
			return servermetrics.RunAgent(o, c.App.Reader, c.App.Writer)
		},
	}
}

// startAgent starts this binary as the scrape agent of targets, writing to
// jsonl, its diagnostics to stderr. It returns when the agent has scraped
// once (before the first send).
func startAgent(targets []string, interval time.Duration, jsonl *os.File, stderr io.Writer) (*servermetrics.Agent, error) {
	if os.Getenv(agentEnv) != "" {
		return nil, errors.New("a scrape agent starts no agent of its own")
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// os.Args[0] as the agent's argv[0]: a binary that is several commands
	// (a test binary) tells them apart by it.
	args := append([]string{os.Args[0], "scrape-agent", "--interval", interval.String(), "--"}, targets...)
	cmd := &exec.Cmd{Path: exe, Args: args, Stderr: stderr, ExtraFiles: []*os.File{jsonl}}
	// One core at a time at most, and a lower priority (agent_*.go): the
	// sender keeps the CPU.
	cmd.Env = append(os.Environ(), agentEnv+"=1", "GOMAXPROCS=1")
	cmd.SysProcAttr = agentProcAttr()
	a, err := servermetrics.StartAgent(cmd, scrapeTimeout(interval)+10*time.Second)
	if err == nil && agentStarted != nil {
		agentStarted(a.Pid())
	}
	return a, err
}

// agentStarted, when set (by tests), is told each agent's process id.
var agentStarted func(pid int)

// scrapeTimeout is servermetrics' timeout of one scrape at interval.
func scrapeTimeout(interval time.Duration) time.Duration {
	return min(max(interval, time.Second), 5*time.Second)
}

package replaycmd

import (
	"encoding/json"
	"strings"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/urfave/cli/v2"
)

// steadyOptions are --steady-state and --steady-state-threshold, of a run
// and of report (metrics.SummarizeSteady holds the method).
type steadyOptions struct {
	on        bool
	threshold float64
}

func (s *steadyOptions) flags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "steady-state", Usage: "also report the metrics over the run's plateau, where requests in flight stay at or above --steady-state-threshold of the target concurrency (vllm-bench's window), beside the whole run's", Destination: &s.on},
		&cli.Float64Flag{Name: "steady-state-threshold", Value: metrics.DefaultSteadyThreshold, Usage: "with --steady-state: the `FRACTION` of the target (the concurrency schedule's --concurrency, else the observed peak) at which the window opens, in (0, 1]", Destination: &s.threshold},
	}
}

// check refuses a threshold outside (0, 1], or given without
// --steady-state.
func (s *steadyOptions) check(c *cli.Context) error {
	if c.IsSet("steady-state-threshold") && !s.on {
		return base.UsageError("--steady-state-threshold: needs --steady-state")
	}
	if !(s.threshold > 0 && s.threshold <= 1) {
		return base.UsageError("--steady-state-threshold %v: want a fraction in (0, 1]", s.threshold)
	}
	return nil
}

// summarize finds the steady state of files (nil without --steady-state)
// against target (0: the observed peak).
func (s *steadyOptions) summarize(files []string, mo metrics.Options, target int) (*metrics.Steady, error) {
	if !s.on {
		return nil, nil
	}
	return metrics.SummarizeSteady(openResults(files), mo, metrics.SteadyOptions{Target: target, Threshold: s.threshold})
}

// planTarget is a run's target concurrency: the concurrency schedule's
// --concurrency (a ceiling of the fixed and rate schedules is no target).
func planTarget(p *replay.Plan) int {
	if p.Schedule == replay.ScheduleConcurrency {
		return max(p.Options.Concurrency, 1)
	}
	return 0
}

// runsTarget is the target of report's runs: one unsharded concurrency
// run's --concurrency, as its records say; else the observed peak.
func runsTarget(runs []*result.RunInfo) int {
	if len(runs) != 1 || runs[0] == nil || runs[0].Shards > 0 || runs[0].Schedule != replay.ScheduleConcurrency {
		return 0
	}
	var cfg struct {
		Concurrency int `json:"concurrency"`
	}
	if json.Unmarshal(runs[0].Config, &cfg) != nil {
		return 0
	}
	return max(cfg.Concurrency, 1)
}

// steadyParts is the console's steady-state text and the export's
// "steady_state" section of st (none for nil).
func steadyParts(st *metrics.Steady, whole *metrics.Summary) (string, []metrics.Section, error) {
	if st == nil {
		return "", nil, nil
	}
	var b strings.Builder
	metrics.WriteSteadyConsole(&b, st, whole)
	sec, err := st.JSON()
	if err != nil {
		return "", nil, err
	}
	return b.String(), []metrics.Section{{Name: "steady_state", Value: sec}}, nil
}

// addTo finds a run's steady state (with --steady-state): its text for
// the console and its section for the summary file.
func (s *steadyOptions) addTo(fin *finished, target int) error {
	st, err := s.summarize(fin.files, fin.mo, target)
	if err != nil {
		return err
	}
	text, secs, err := steadyParts(st, fin.sum)
	fin.steady, fin.run.Sections = text, append(fin.run.Sections, secs...)
	return err
}

// reportSteady is report's steady state (with --steady-state): the
// console text and the section.
func reportSteady(ro *reportOptions, files []string, mo metrics.Options, runs []*result.RunInfo, sum *metrics.Summary) (string, []metrics.Section, error) {
	st, err := ro.steady.summarize(files, mo, runsTarget(runs))
	if err != nil {
		return "", nil, err
	}
	return steadyParts(st, sum)
}

// stepSummary is what a sweep step is judged on: with --steady-state,
// the summary of the requests that started in its steady window when one
// was found (else the whole step's), and the section for the step's
// exports.
func (s *steadyOptions) stepSummary(files []string, mo metrics.Options, target int, whole *metrics.Summary) (*metrics.Summary, []metrics.Section, error) {
	st, err := s.summarize(files, mo, target)
	if err != nil || st == nil {
		return whole, nil, err
	}
	_, secs, err := steadyParts(st, whole)
	if err != nil {
		return nil, nil, err
	}
	if st.Summary != nil && st.Summary.Requests > 0 {
		return st.Summary, secs, nil
	}
	return whole, secs, nil
}

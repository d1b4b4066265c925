package replaycmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/htmlreport"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/rundir"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/aiperf/toolkit/lib/sweep"
	"github.com/urfave/cli/v2"
)

// sweepRun is what the steps of a sweep share, decided once.
type sweepRun struct {
	c         *cli.Context
	o         *sweepOptions
	base      replay.Options
	st        *store.Reader
	storePath string
	mo        metrics.Options
}

func runSweep(c *cli.Context, o *sweepOptions) error {
	r, sw, err := parseSweep(c, o)
	if err != nil {
		return err
	}
	st, err := store.Open(r.storePath, store.DefaultOpenOptions())
	if err != nil {
		return err
	}
	defer st.Close()
	r.st = st
	if st.Len() == 0 {
		return base.UsageError("%s: the store has no records", r.storePath)
	}
	sw.SessionsPerRequest = float64(st.NumSessions()) / float64(st.Len())
	sw.SessionRequests = sessionRequests(st)
	claim, err := rundir.Take(o.out, rundir.ClaimOptions{Kind: rundir.KindSweep, Follow: []string{o.page}})
	if err != nil {
		return base.UsageError("%v", err)
	}
	defer claim.Release()
	if o.page != "" { // after DIR is made: the page may go in it
		if err := checkHTML(o.page, r.storePath, sw.StatePath()); err != nil {
			return err
		}
	}
	sw.Settings = o.settings(st, r.storePath, r.mo.Goodput)
	if err := sw.Resume(); err != nil {
		if se := (*sweep.SettingsError)(nil); errors.As(err, &se) {
			return base.UsageError("%v", err)
		}
		return &base.Error{Code: base.ExitTrouble, Err: err}
	}
	w := c.App.ErrWriter
	if !o.quiet {
		announceSweep(w, sw, st.Len())
		sw.OnStep = stepPrinter(w, sw)
	}
	state, err := sw.Run(c.Context, r.step)
	if err != nil {
		printInterrupted(c, o, sw)
		return err
	}
	if o.page != "" {
		if err := writeSweepHTML(o.page, sw.StatePath(), state); err != nil {
			return err
		}
	}
	ans := *state.Answer
	if err := sweep.WriteTable(c.App.Writer, state.Steps, ans, state.ElapsedSec); err != nil {
		return err
	}
	switch {
	case ans.ClientBusy:
		return base.No("%s", ans.Note)
	case !ans.Found:
		return base.No("no load meets the SLOs: %s", ans.Note)
	}
	return nil
}

// printInterrupted prints, when the sweep was interrupted, the table of
// the steps done and writes its --html page, as sweep report would.
func printInterrupted(c *cli.Context, o *sweepOptions, sw *sweep.Sweep) {
	if c.Context.Err() == nil {
		return
	}
	st, err := sweep.LoadState(sw.StatePath())
	if err != nil || st == nil {
		return
	}
	sweep.WriteTable(c.App.Writer, st.Steps, st.Result(), st.ElapsedSec)
	if o.page != "" {
		if err := writeSweepHTML(o.page, sw.StatePath(), st); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "aiperf-replay sweep: %v\n", err)
		}
	}
}

// stepPrinter prints a line per step and, after the two probes, an
// estimate of what the search has left.
func stepPrinter(w io.Writer, sw *sweep.Sweep) func(sweep.Step, bool) {
	var sync sweep.Step
	return func(s sweep.Step, reused bool) {
		fmt.Fprintf(w, "aiperf-replay sweep: %s\n", sweep.StepLine(s, reused))
		switch s.Kind {
		case sweep.KindSynchronous:
			sync = s
		case sweep.KindThroughput:
			if n, d := sw.Estimate(sync, s); n > 0 {
				fmt.Fprintf(w, "aiperf-replay sweep: estimate: about %d more steps (bisection to within --tolerance), about %v\n", n, d.Round(time.Second))
			}
		}
	}
}

// announceSweep says how long the sweep may take, and how a step covers a
// store of n requests when it does not simply play its first requests.
func announceSweep(w io.Writer, sw *sweep.Sweep, n int) {
	if sw.MaxStepTime > 0 {
		fmt.Fprintf(w, "aiperf-replay sweep: at most %d steps, each sending for at most %v (--max-step-time): at most %v of steps\n",
			sw.MaxSteps, sw.MaxStepTime, time.Duration(sw.MaxSteps)*sw.MaxStepTime)
	}
	switch sent := sw.Warmup + sw.Requests; {
	case sw.Duration > 0:
		fmt.Fprintf(w, "aiperf-replay sweep: each step runs %v after %d warmup requests; the store (%d requests) is replayed from its first session, going around it when it runs out\n",
			sw.Duration, sw.Warmup, n)
	case sent > int64(n):
		fmt.Fprintf(w, "aiperf-replay sweep: each step sends %d requests (%d warmup) and the store holds %d: steps go around the store, from its first session\n",
			sent, sw.Warmup, n)
	}
}

// writeSweepHTML writes the sweep's page atomically.
func writeSweepHTML(path, statePath string, state *sweep.State) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := htmlreport.WriteSweep(f, htmlreport.SweepPage{Source: statePath, State: state}); err != nil {
		return fmt.Errorf("%s: %w", path, f.Named(err))
	}
	return f.Commit()
}

// step runs one step of the search as a replay into its run directory.
func (r *sweepRun) step(ctx context.Context, sr sweep.StepRun) (*sweep.Measured, error) {
	plan, err := replay.NewPlan(r.st, r.stepOptions(sr))
	if err != nil {
		return nil, planError(err)
	}
	f, recPath, claim, err := createOutputs(sr.Dir, r.storePath, rundir.ClaimOptions{Nested: true})
	if err != nil {
		return nil, err
	}
	defer claim.Release()
	defer f.Abort()
	plan.Options.Results = f
	plan.Options.Cut = base.SecondSignal(r.c.Context)
	plan.Options.StoreName = storeName(r.storePath)
	m := &sweep.Measured{}
	played := map[uint32]bool{} // the store's sessions the step played
	plan.Options.Observe = func(rec *result.Record) {
		if rec.Phase == result.PhaseWarmup {
			return
		}
		if rec.Record >= 0 && rec.Record < r.st.Len() {
			played[r.st.Entry(rec.Record).Session] = true
		}
		m.Sends = append(m.Sends, rec.SentNS)
		if rec.OK() {
			m.Ends = append(m.Ends, rec.EndNS)
		}
	}
	plan.Options.Config = r.stepConfig(plan, sr.Duration)
	stats, err := plan.Run(ctx)
	if stats == nil {
		return nil, base.UsageError("%v", err)
	}
	if err != nil {
		return nil, err
	}
	if stats.Interrupted {
		return nil, ctx.Err()
	}
	if err := f.Commit(); err != nil {
		return nil, err
	}
	m.Elapsed, m.CeilingWaits, m.CeilingMaxWait = stats.Elapsed, stats.CeilingWaits, stats.CeilingMaxWait
	m.SessionsPerRequest = sessionsPerRequest(r.st, played)
	m.Summary, err = r.writeStep(sr.Dir, plan, stats, recPath)
	return m, err
}

// stepOptions are the replay options of step sr.
func (r *sweepRun) stepOptions(sr sweep.StepRun) replay.Options {
	ro := r.base
	ro.Arrival, ro.Smoothness, ro.Rate = "", 0, 0
	ro.RequestCount, ro.Warmup, ro.Duration = sr.Requests, sr.Warmup, sr.Duration
	if sr.Cap > 0 && (ro.Duration == 0 || ro.Duration > sr.Cap) {
		ro.Duration = sr.Cap // --max-step-time: sending stops there
	}
	switch {
	case sr.By == sweep.ByRate:
		ro.Schedule, ro.Rate, ro.Arrival = replay.ScheduleRate, sr.Load, r.o.arrival
		ro.Concurrency = r.o.maxConcurrency
	default:
		ro.Schedule, ro.Concurrency = replay.ScheduleConcurrency, int(sr.Load)
	}
	return ro
}

// stepConfig is the input config of a step's run: the replay flags that
// would have made it.
func (r *sweepRun) stepConfig(plan *replay.Plan, d time.Duration) json.RawMessage {
	ro := r.o.options
	ro.schedule, ro.concurrency, ro.rate = plan.Schedule, plan.Options.Concurrency, plan.Options.Rate
	ro.arrival, ro.requestCount, ro.warmup, ro.duration = plan.Options.Arrival, plan.Options.RequestCount, plan.Options.Warmup, ""
	if d > 0 {
		ro.duration = d.String()
	}
	return ro.inputConfig(r.storePath, plan.Schedule)
}

// writeStep summarizes a step's results and writes its run directory's
// exports.
func (r *sweepRun) writeStep(dir string, plan *replay.Plan, stats *replay.Stats, recPath string) (*metrics.Summary, error) {
	mo := r.mo
	mo.Streaming = stats.StreamingMetrics(plan.Streaming)
	files := []string{recPath}
	sum, err := summarize(files, mo)
	if err != nil {
		if !mo.Streaming {
			return nil, base.UsageError("--goodput: %v (the answers were not streamed)", err)
		}
		return nil, err
	}
	// the exports describe the step as a run's do (aiperf's UserConfig),
	// from the run info its results carry
	run := metrics.Run{BenchmarkID: stats.RunID, Version: "aiperf-replay " + base.Version}
	run.InputConfig, run.RunInfo = runConfig(recPath, plan, stats, sum.Requests+sum.ErrorRequests)
	judged, secs, err := r.o.steady.stepSummary(files, mo, planTarget(plan), sum) // --steady-state
	if err != nil {
		return nil, err
	}
	run.Sections = secs
	return judged, writeOutputs(dir, sum, mo, run, files)
}

// sessionRequests is the number of requests the n sessions a rate
// schedule starts after warmup requests hold: the store's sessions in
// order (around again past its end), from the first one the warmup does
// not use up.
func sessionRequests(st *store.Reader) func(warmup, n int64) int64 {
	ns, nr := int64(st.NumSessions()), int64(st.Len())
	length := func(k int64) int64 { return int64(st.SessionLen(uint32(k % ns))) }
	return func(warmup, n int64) int64 {
		first := warmup / nr * ns
		for used := warmup / nr * nr; used < warmup; first++ {
			used += length(first)
		}
		total := n / ns * nr
		for k := range n % ns {
			total += length(first + k)
		}
		return total
	}
}

// sessionsPerRequest is the sessions a request of the store's sessions
// played, each counted whole; 0 for none.
func sessionsPerRequest(st *store.Reader, played map[uint32]bool) float64 {
	var reqs int64
	for s := range played {
		reqs += int64(st.SessionLen(s))
	}
	if reqs == 0 {
		return 0
	}
	return float64(len(played)) / float64(reqs)
}

package replaycmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/rundir"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/urfave/cli/v2"
)

// runTrials runs the schedule o.trials times, each a normal run into
// o.out/trial-K, pausing --trial-pause between them, then writes
// o.out/trials.json: every figure's mean and confidence interval across
// the trials. A trial over --max-error-rate does not stop the others (the
// exit is 1 at the end); an interrupt stops after the trial it cut, and the
// summary covers the trials that finished.
func runTrials(c *cli.Context, o *options, st *store.Reader, ro replay.Options, storePath string, goodput metrics.Goodput, maxErr float64) error {
	if err := checkTrialFlags(o); err != nil {
		return err
	}
	pause, err := duration("--trial-pause", o.trialPause)
	if err != nil {
		return err
	}
	w, restore := tapTrials(c, o)
	defer restore()
	claim, err := claimTrials(w, o)
	if err != nil {
		return err
	}
	defer claim.Release()
	var done []string // the finished trials' records files
	var no error
	for k := 1; k <= o.trials; k++ {
		if k > 1 && pause > 0 {
			if err := sleep(c.Context, pause); err != nil {
				break
			}
		}
		to := *o
		to.out, to.nested = rundir.TrialDir(o.out, k), true
		to.html = "" // the trials page, written at the end, holds every trial's
		if !o.quiet {
			fmt.Fprintf(w, "aiperf-replay: trial %d of %d into %s/\n", k, o.trials, to.out)
		}
		err := runOnce(c, &to, st, ro, storePath, goodput, maxErr)
		if rerr := dropTrialsSummary(c, o.out, k, err); rerr != nil {
			return rerr
		}
		var be *base.Error
		switch {
		case err == nil:
		case errors.As(err, &be) && be.Code == base.ExitNo:
			if no == nil {
				no = base.No("trial %d: %v", k, be.Err)
			}
		case c.Context.Err() != nil:
			return errors.Join(err, writeTrials(w, o, done, goodput))
		default:
			return err
		}
		done = append(done, rundir.ResultsPath(to.out))
	}
	if err := writeTrials(w, o, done, goodput); err != nil {
		return err
	}
	if c.Context.Err() != nil {
		return c.Context.Err()
	}
	return no
}

// checkTrialFlags refuses what --trials cannot do.
func checkTrialFlags(o *options) error {
	switch {
	case o.trials < 1:
		return base.UsageError("--trials %d: want at least 1", o.trials)
	case !(o.confidence > 0 && o.confidence < 1):
		return base.UsageError("--confidence-level %v: want a level between 0 and 1 (0.95 for 95%%)", o.confidence)
	case o.shard != "" || o.startAt != "":
		return base.UsageError("--trials: not with --shard or --start-at (a sharded replay's trials would need one start per trial)")
	}
	return nil
}

// claimTrials takes the trials' folder (refused when it holds an earlier
// run's results or trials, unless --force; each trial takes its trial-K)
// and warns of an earlier run's trials past this run's.
func claimTrials(w io.Writer, o *options) (*rundir.Claim, error) {
	claim, err := rundir.Take(o.out, rundir.ClaimOptions{Force: o.force})
	if err != nil {
		return nil, base.UsageError("%v", err)
	}
	staleTrials(w, o.out, o.trials)
	return claim, nil
}

// dropTrialsSummary removes dir's earlier trials.json once trial 1 has run
// (err: its outcome): that summary would name these folders while this run
// rewrites them, and stay, were this run to die before its own. A run
// refused before its first send leaves it.
func dropTrialsSummary(c *cli.Context, dir string, k int, err error) error {
	var be *base.Error
	ran := err == nil || c.Context.Err() != nil || errors.As(err, &be) && be.Code == base.ExitNo
	if k != 1 || !ran {
		return nil
	}
	if err := os.Remove(filepath.Join(dir, rundir.TrialsFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// staleTrials warns about trial folders in dir past the n this run makes:
// an earlier run's, which compare and report leave out (they read the
// trials trials.json lists).
func staleTrials(w io.Writer, dir string, n int) {
	dirs, _ := rundir.TrialDirs(dir)
	for _, d := range dirs {
		if k, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), rundir.TrialPrefix)); k > n {
			fmt.Fprintf(w, "aiperf-replay: warning: %s is an earlier run's, not one of these %d trials: compare and report read the trials %s lists\n", d, n, rundir.TrialsFile)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeTrials writes o.out/trials.json over the finished trials and,
// unless quiet, the table on w.
func writeTrials(w io.Writer, o *options, files []string, goodput metrics.Goodput) error {
	if len(files) == 0 {
		return nil
	}
	ts, err := rundir.SummarizeTrials(files, metrics.Options{Goodput: goodput}, o.confidence)
	if err != nil {
		return err
	}
	path, err := rundir.WriteTrials(o.out, ts)
	if err != nil {
		return err
	}
	if err := writeAggregate(o, files); err != nil {
		return err
	}
	if o.html != "" {
		if err := trialsRunHTML(o.html, o.out, ts, goodput, w); err != nil {
			return err
		}
	}
	if !o.quiet {
		rundir.WriteTrialsTable(w, ts)
		page := ""
		if o.html != "" {
			page = ", the page of the trials in " + o.html
		}
		fmt.Fprintf(w, "aiperf-replay: %d trials; the summary across them is in %s%s\n", ts.Trials, path, page)
	}
	return nil
}

// writeAggregate writes o.out/aggregate/profile_export_aiperf_aggregate.json
// and .csv, aiperf's --num-profile-runs aggregate, over the finished
// trials; with fewer than two that completed a request there is none
// (an earlier run's is removed).
func writeAggregate(o *options, files []string) error {
	dirs := make([]string, len(files))
	for i, f := range files {
		dirs[i] = filepath.Dir(f)
	}
	pause, _ := duration("--trial-pause", o.trialPause)
	return writeAggregateOf(o.out, dirs, o.confidence, pause.Seconds())
}

// writeAggregateOf writes out's aggregate over the trial folders dirs, or
// removes an earlier one when fewer than two completed a request.
func writeAggregateOf(out string, dirs []string, level, pause float64) error {
	a, err := rundir.SummarizeAggregate(dirs, level, pause, "aiperf-replay "+base.Version)
	if err != nil {
		return err
	}
	if a != nil {
		return rundir.WriteAggregate(out, a)
	}
	for _, name := range []string{rundir.AggregateJSON, rundir.AggregateCSV} {
		if err := os.Remove(filepath.Join(out, rundir.AggregateDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

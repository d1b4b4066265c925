package replaycmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/rundir"
)

// readRuns returns the run info of each results file (rundir.Runs).
func readRuns(files []string) []*result.RunInfo { return rundir.Runs(files) }

// checkRuns refuses to merge the results of runs of different stores (exit
// 2, naming the files), and warns when runs of one store had different
// settings: their merge is not the shards of one run. Files without run
// info are merged as they always were.
func checkRuns(w io.Writer, files []string, runs []*result.RunInfo) error {
	files = rundir.DisplayNames(files)
	first := -1
	for i, r := range runs {
		if r == nil {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		a := runs[first]
		for j := range i {
			if b := runs[j]; b != nil && b.ID != "" && b.ID == r.ID && b.Shard == r.Shard {
				return base.UsageError("%s and %s hold the same run (id %s): its requests would count twice", files[j], files[i], r.ID)
			}
		}
		if same, known := a.SameStore(r); known && !same {
			return base.UsageError("%s and %s are runs of different stores (%s, sha256 %s; %s, sha256 %s): their requests do not merge into one run",
				files[first], files[i], rundir.ShowPath(a.Store.Path), short(a.Store.SHA256), rundir.ShowPath(r.Store.Path), short(r.Store.SHA256))
		}
		// Where each wrote its exports, and its slices, are not settings of
		// the load.
		if d := a.Diff(r, append([]string{"store"}, outputSettings...)...); len(d) > 0 {
			fmt.Fprintf(w, "aiperf-replay: warning: %s and %s are runs with different settings (%s): merged as if they were shards of one run\n",
				files[first], files[i], strings.Join(d, "; "))
		}
	}
	return nil
}

// checkEnds judges how the runs ended (rundir.EndWarnings): the warnings
// about the runs that did not end (no end line) or were interrupted, for
// the caller to print once the files have read (a file that cannot be
// read is the error, alone), and whether one was interrupted.
func checkEnds(files []string, runs []*result.RunInfo) (warnings []string, interrupted bool) {
	return rundir.EndWarnings(files, runs, rundir.Ends(files, runs), len(files) > 1)
}

func short(sum string) string { return rundir.ShortSum(sum) }

func knownRuns(runs []*result.RunInfo) bool { return rundir.KnownRuns(runs) }

func streamingOf(files []string, runs []*result.RunInfo) (bool, error) {
	return rundir.StreamingOf(files, runs)
}

// reportRun describes the merged runs for profile_export_aiperf.json: the
// run's id and settings (aiperfInputConfig, with what the report made its
// exports with) when the files are one run's (or the shards of one), else
// an id made from theirs and the first run's settings.
func reportRun(runs []*result.RunInfo, made *reportMade) metrics.Run {
	run := metrics.Run{Version: "aiperf-replay " + base.Version, WasCancelled: made != nil && made.cancelled}
	var ids []string
	var first *result.RunInfo
	for _, r := range runs {
		if r == nil {
			continue
		}
		if first == nil {
			first = r
		}
		if !slices.Contains(ids, r.ID) {
			ids = append(ids, r.ID)
		}
	}
	switch len(ids) {
	case 0:
	case 1:
		run.BenchmarkID = ids[0]
	default:
		slices.Sort(ids)
		h := sha256.Sum256([]byte(strings.Join(ids, "\n")))
		run.BenchmarkID = "merged-" + hex.EncodeToString(h[:8])
	}
	if first != nil {
		var profiled int64
		if made != nil {
			profiled = made.profiled
		}
		run.InputConfig = aiperfInputConfig(first, made, run.BenchmarkID, profiled)
		run.RunInfo = aiperfRunInfo(first, run.BenchmarkID)
	}
	return run
}

// outputSettings are the settings of a run that are not what was measured
// (rundir.OutputSettings).
var outputSettings = rundir.OutputSettings

// storeName is the store's path as the results name it: absolute, so
// that report, run from another folder, finds the store for the
// prefix-cache figures (a relative path named a different file there).
func storeName(path string) string {
	// As the kernel resolves it: a relative path from the working folder's
	// physical path (Getwd may give the logical one, through a link, and
	// ".." would then be cleaned by text to another folder), links
	// resolved.
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return path
		}
		if real, err := filepath.EvalSymlinks(wd); err == nil {
			wd = real
		}
		path = filepath.Join(wd, path)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return filepath.Clean(path)
}

// runsGoodput is the SLOs the first run recorded (--goodput), which
// report applies unless given its own: its table is then the run's. SLOs
// that no longer parse are left out, with a warning on w.
func runsGoodput(w io.Writer, runs []*result.RunInfo) string {
	var seen []string // the runs' --goodput, each once, in order
	for _, r := range runs {
		if r == nil || len(r.Config) == 0 {
			continue
		}
		var c flatConfig
		json.Unmarshal(r.Config, &c) // a member of another type reads as zero
		if !slices.Contains(seen, c.Goodput) {
			seen = append(seen, c.Goodput)
		}
	}
	if len(seen) == 0 {
		return ""
	}
	if len(seen) > 1 {
		fmt.Fprintf(w, "aiperf-replay: warning: the runs had different --goodput (%q): the first run's applies (give --goodput to choose)\n", seen)
	}
	if _, err := parseGoodput(seen[0]); err != nil {
		fmt.Fprintf(w, "aiperf-replay: warning: the run's --goodput %q: %v: no goodput (give --goodput)\n", seen[0], err)
		return ""
	}
	return seen[0]
}

package replaycmd

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

// readRuns returns the run info of each records file: its first record's
// (nil for a file without one, written before records carried it, or
// empty). A file that cannot be read or decoded gives nil here; reading
// it for the summary reports the problem.
func readRuns(files []string) []*result.RunInfo {
	runs := make([]*result.RunInfo, len(files))
	for i, name := range files {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		var r result.Record
		if result.NewDecoder(f, name).Next(&r) == nil {
			runs[i] = r.Run
		}
		f.Close()
	}
	return runs
}

// checkRuns refuses to merge the records of runs of different stores (exit
// 2, naming the files), and warns when runs of one store had different
// settings: their merge is not the shards of one run. Files without run
// info are merged as they always were.
func checkRuns(w io.Writer, files []string, runs []*result.RunInfo) error {
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
		if same, known := a.SameStore(r); known && !same {
			return base.UsageError("%s and %s are runs of different stores (%s, sha256 %s; %s, sha256 %s): their requests do not merge into one run",
				files[first], files[i], a.Store.Path, short(a.Store.SHA256), r.Store.Path, short(r.Store.SHA256))
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

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12] + "…"
	}
	return sum
}

// knownRuns reports whether every file carries run info.
func knownRuns(runs []*result.RunInfo) bool {
	return len(runs) > 0 && !slices.Contains(runs, nil)
}

// streamingOf decides the streaming metrics of files that all carry run
// info as the run did (replay.Stats.StreamingMetrics): they follow what the
// answers were (the records' "streamed"), or with no successful answer,
// what the store's bodies asked for.
func streamingOf(files []string, runs []*result.RunInfo) (bool, error) {
	src, c, err := openRecords(files)()
	if err != nil {
		return false, err
	}
	defer c.Close()
	var r result.Record
	answered := false
	for {
		err := src.Next(&r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, &base.Error{Code: base.ExitTrouble, Err: err}
		}
		if r.OK() {
			if r.Streamed {
				return true, nil
			}
			answered = true
		}
	}
	if answered {
		return false, nil
	}
	return slices.ContainsFunc(runs, func(r *result.RunInfo) bool { return r.Streaming }), nil
}

// reportRun describes the merged runs for profile_export_aiperf.json: the
// run's id and settings (aiperfInputConfig, with report's slice duration
// when it has one) when the files are one run's (or the shards of one),
// else an id made from theirs and the first run's settings.
func reportRun(runs []*result.RunInfo, slice time.Duration) metrics.Run {
	run := metrics.Run{Version: "aiperf-replay " + base.Version}
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
		run.InputConfig = aiperfInputConfig(first, slice, run.BenchmarkID)
		run.RunInfo = aiperfRunInfo(first, run.BenchmarkID)
	}
	return run
}

// outputSettings are the settings of a run that say where and how its
// files were written, not what was measured: runs that differ only in them
// are alike (shards, trials, the two sides of a comparison).
var outputSettings = []string{"output", "slice_duration"}

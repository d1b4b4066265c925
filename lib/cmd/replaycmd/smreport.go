package replaycmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/rundir"
	"github.com/aiperf/toolkit/lib/servermetrics"
)

// serverRebuild is what report rebuilds of the runs' server side: the
// server-metrics report from each run directory's
// server_metrics_export.jsonl (servermetrics.Rebuild), and the prefix
// figures when the store the records name is there to give the trace's
// ideal (rundir.StorePrefix).
type serverRebuild struct {
	rep   *servermetrics.Report
	ps    *prefixSummary
	files []string // the results files (warmupWarnings)
}

// rebuildServer rebuilds the server side of the run directories among
// args (the names given; files are their results files) and, with out,
// writes the JSON and CSV exports there. A results file given as such (or
// stdin) brings its results alone. A JSONL stream that cannot be read is
// exit 2, naming its line.
func rebuildServer(errw io.Writer, args, files []string, runs []*result.RunInfo, out string, sum *metrics.Summary, run metrics.Run) (*serverRebuild, error) {
	var dirs []string // a run directory given stands for its results file
	for _, a := range args {
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			dirs = append(dirs, filepath.Clean(a))
		}
	}
	rb, err := servermetrics.Rebuild(dirs, out, profilingWindow(sum), servermetrics.Meta{Version: run.Version, BenchmarkID: run.BenchmarkID})
	var le *servermetrics.LineError
	if errors.As(err, &le) {
		return nil, &base.Error{Code: base.ExitTrouble, Err: err}
	}
	if err != nil {
		return nil, err
	}
	for _, n := range rb.Notes {
		fmt.Fprintf(errw, "aiperf-replay: note: %s\n", n)
	}
	for _, w := range rb.Warnings {
		fmt.Fprintf(errw, "aiperf-replay: warning: %s\n", w)
	}
	r := &serverRebuild{rep: rb.Report, files: files}
	s, note, err := rundir.StorePrefix(files, runs)
	if note != "" {
		fmt.Fprintf(errw, "aiperf-replay: note: %s\n", note)
	}
	if s == nil || err != nil {
		return r, err
	}
	r.ps = &prefixSummary{s}
	r.ps.measure(r.rep, clientFigures(sum).HitRate)
	return r, nil
}

// sections is the prefix figures as a member of the summary file, if any.
func (r *serverRebuild) sections() ([]metrics.Section, error) {
	if r == nil || r.ps == nil {
		return nil, nil
	}
	sec, err := r.ps.section()
	if err != nil {
		return nil, err
	}
	return []metrics.Section{{Name: "prefix_cache", Value: sec}}, nil
}

// profilingWindow is the span of the profiling phase of sum (the whole
// run when nothing was profiled).
func profilingWindow(sum *metrics.Summary) servermetrics.Window {
	w := servermetrics.Window{Start: sum.StartNS, End: sum.EndNS}
	if w.End <= w.Start {
		w = servermetrics.Window{Start: 0, End: 1<<63 - 1}
	}
	return w
}

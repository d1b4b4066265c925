package replaycmd

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/servermetrics"
	"github.com/aiperf/toolkit/lib/store"
)

// serverRebuild is what report rebuilds of the runs' server side: the
// server-metrics report from each run directory's
// server_metrics_export.jsonl, and the prefix figures when the store the
// records name is there to give the trace's ideal.
type serverRebuild struct {
	rep *servermetrics.Report
	ps  *prefixSummary
}

// rebuildServer reads the scrapes of the run directories among args (the
// names given; files are their records files) and, with out, writes the
// JSON and CSV exports there. A records file given as such (or stdin)
// brings its records alone. Shards' scrapes are joined by target; a target several
// shards scraped is taken from the first of them that has it, with a note.
// A JSONL stream that cannot be read is exit 2, naming its line.
func rebuildServer(errw io.Writer, args, files []string, runs []*result.RunInfo, out string, sum *metrics.Summary, run metrics.Run) (*serverRebuild, error) {
	var names []string
	var cs []*servermetrics.Collector
	for i, f := range files {
		if fi, err := os.Stat(args[i]); err != nil || !fi.IsDir() {
			continue // a records file (or stdin): its records alone
		}
		p := filepath.Join(filepath.Dir(f), servermetrics.JSONLFile)
		c, err := loadStrict(errw, p)
		if err != nil {
			return nil, err
		}
		if c != nil {
			names, cs = append(names, filepath.Dir(f)), append(cs, c)
		}
	}
	r := &serverRebuild{}
	if len(cs) > 0 {
		if out != "" {
			if err := os.MkdirAll(out, 0o777); err != nil {
				return nil, err
			}
		}
		c, notes := servermetrics.MergeLoaded(names, cs)
		for _, n := range notes {
			fmt.Fprintf(errw, "aiperf-replay: note: %s\n", n)
		}
		meta := servermetrics.Meta{Version: run.Version, BenchmarkID: run.BenchmarkID}
		var err error
		if out != "" {
			r.rep, err = writeServerExports(out, c, sum, meta)
		} else {
			r.rep = c.Report(profilingWindow(sum))
		}
		if err != nil {
			return nil, err
		}
	}
	ps, err := reportPrefix(errw, files, runs)
	if err != nil || ps == nil {
		return r, err
	}
	ps.measure(r.rep, clientFigures(sum).HitRate)
	r.ps = ps
	return r, nil
}

// loadStrict loads the JSONL stream at p: nil when there is none; a bad
// line is a usage error (exit 2) naming it.
func loadStrict(errw io.Writer, p string) (*servermetrics.Collector, error) {
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, cut, err := servermetrics.LoadJSONL(f, p, servermetrics.DefaultLimits)
	if err != nil {
		return nil, &base.Error{Code: base.ExitTrouble, Err: err}
	}
	if cut > 0 {
		fmt.Fprintf(errw, "aiperf-replay: warning: server metrics: %s: the last line is cut short (the scraper stopped mid-write); left out\n", p)
	}
	return c, nil
}

// reportPrefix computes the trace's prefix figures for the requests of
// files when the store their records name (path and sha256) is at that
// path; nil when they name none, or it has no hash_ids. A store that is
// not there, or not the same, is a note.
func reportPrefix(errw io.Writer, files []string, runs []*result.RunInfo) (*prefixSummary, error) {
	var first *result.RunInfo
	for _, r := range runs {
		if r != nil {
			first = r
			break
		}
	}
	if first == nil || first.Store.Path == "" || first.Store.SHA256 == "" {
		return nil, nil
	}
	st, err := store.Open(first.Store.Path, store.DefaultOpenOptions())
	if err != nil {
		fmt.Fprintf(errw, "aiperf-replay: note: the store %s the records name does not open here (%v): no prefix-cache figures against the trace\n", first.Store.Path, err)
		return nil, nil
	}
	defer st.Close()
	if sum := st.Sum(); hex.EncodeToString(sum[:]) != first.Store.SHA256 {
		fmt.Fprintf(errw, "aiperf-replay: note: %s is not the store the records name (its sha256 differs): no prefix-cache figures against the trace\n", first.Store.Path)
		return nil, nil
	}
	return tracePrefix(st, files, 0)
}

// print writes the prefix figures and the server summary (on w) beside
// the client's figures of sum, and the warnings (on errw).
func (r *serverRebuild) print(w, errw io.Writer, sum *metrics.Summary) {
	if r == nil {
		return
	}
	if r.ps != nil {
		r.ps.writeBox(w)
	}
	if r.rep == nil {
		return
	}
	for _, s := range servermetrics.Warnings(r.rep) {
		fmt.Fprintf(errw, "aiperf-replay: warning: %s\n", s)
	}
	servermetrics.WriteConsole(w, r.rep, clientFigures(sum))
}

// section is the prefix figures as a member of the summary file, if any.
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

package replaycmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/htmlreport"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

// checkHTML refuses, before any work, an --html page that cannot be
// written: a path that is not a regular file, a folder that does not exist,
// or one of the inputs.
func checkHTML(path string, inputs ...string) error {
	dest, err := atomicfile.Destination(path)
	if err != nil {
		return base.UsageError("--html %v", err)
	}
	dir := filepath.Dir(dest)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return base.UsageError("--html %s: the folder %s does not exist", path, dir)
	}
	if fi, err := os.Stat(dest); err == nil {
		for _, in := range inputs {
			if ii, err := os.Stat(in); err == nil && os.SameFile(fi, ii) {
				return base.UsageError("--html %s is the input %s", path, displayName(in))
			}
		}
	}
	return nil
}

// summarizeCollect computes the summary of files and, when collect, gathers
// the charts' data from the summary's first pass (no pass of its own).
func summarizeCollect(files []string, o metrics.Options, collect bool) (*metrics.Summary, *htmlreport.Collector, error) {
	if !collect {
		s, err := summarize(files, o)
		return s, nil, err
	}
	col, err := htmlreport.NewCollector(o)
	if err != nil {
		return nil, nil, err
	}
	open := openResults(files)
	first := true
	tee := func() (metrics.Source, io.Closer, error) {
		src, c, err := open()
		if err == nil && first {
			first = false
			src = &collecting{src, col}
		}
		return src, c, err
	}
	s, err := summarizeOpen(tee, o)
	return s, col, err
}

// collecting hands each record it yields to a collector too.
type collecting struct {
	metrics.Source
	col *htmlreport.Collector
}

func (c *collecting) Next(r *result.Record) error {
	err := c.Source.Next(r)
	if err == nil {
		c.col.Add(r)
	}
	return err
}

// writeHTML writes the page atomically, with the console's parts after
// the table and the warnings printed.
func writeHTML(path string, col *htmlreport.Collector, s *metrics.Summary, runID string, files []string, parts *consoleParts, tap *warnTap) error {
	var console strings.Builder
	if err := metrics.WriteConsole(&console, s, ""); err != nil {
		return err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = displayName(f)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	page := htmlreport.Page{Sources: names, RunID: runID, Summary: s, Console: console.String()}
	page.Warnings, page.Notes, page.Texts = parts.page(tap)
	for _, r := range readRuns(files) {
		if r != nil {
			c := *r
			page.Run = &c
			break
		}
	}
	if r := page.Run; r != nil && r.Shards > 0 && len(files) > 1 {
		r.Offered = "" // the first shard's share; the page is the merged replay's
	}
	if err := htmlreport.Write(f, page, col); err != nil {
		return fmt.Errorf("%s: %w", path, f.Named(err))
	}
	return f.Commit()
}

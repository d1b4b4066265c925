package replaycmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/servermetrics"
)

// loadScrapes rebuilds the scraped series from a JSONL stream. A stream
// that cannot be read is a warning (the run is complete without it), and
// nil; a last line cut short (a killed agent) is left out with a warning.
func loadScrapes(w io.Writer, path string) (*servermetrics.Collector, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, cut, err := servermetrics.LoadJSONL(f, path, servermetrics.DefaultLimits)
	var le *servermetrics.LineError
	if errors.As(err, &le) {
		fmt.Fprintf(w, "aiperf-replay: warning: server metrics: %v: no server-metrics exports\n", err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if cut > 0 {
		fmt.Fprintf(w, "aiperf-replay: warning: server metrics: %s: the last line is cut short (the scraper stopped mid-write); left out\n", path)
	}
	return c, nil
}

// writeServerExports writes the JSON and CSV exports of c over the
// profiling window of sum into dir, and returns the report.
func writeServerExports(dir string, c *servermetrics.Collector, sum *metrics.Summary, meta servermetrics.Meta) (*servermetrics.Report, error) {
	rep := c.Report(profilingWindow(sum))
	for _, x := range []struct {
		name string
		fn   func(io.Writer, *servermetrics.Report, servermetrics.Meta) error
	}{{servermetrics.JSONFile, servermetrics.WriteJSON}, {servermetrics.CSVFile, servermetrics.WriteCSV}} {
		f, err := atomicfile.Create(filepath.Join(dir, x.name))
		if err != nil {
			return nil, err
		}
		if err := x.fn(f, rep, meta); err != nil {
			f.Abort()
			return nil, err
		}
		if err := f.Commit(); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

package replaycmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/rundir"
	"github.com/aiperf/toolkit/lib/servermetrics"
)

// writeRunOutputs writes the exports, the time slices and the HTML page.
func writeRunOutputs(o *options, fin *finished, tap *warnTap) error {
	if err := rundir.WriteSummaryExports(o.out, fin.sum, fin.run); err != nil {
		return err
	}
	if err := writeTimeslices(o.out, fin.slices, fin.run); err != nil {
		return err
	}
	dropStale(tap, o.out, runOutputs(o, fin), "run")
	if o.html != "" {
		return writeHTML(o.html, fin.col, fin.sum, fin.stats.RunID, fin.files, &fin.parts, tap)
	}
	return nil
}

// runOutputs names the files a run wrote into its folder.
func runOutputs(o *options, fin *finished) []string {
	out := []string{recordsFile, exportJSONFile, exportCSVFile, exportRecordFile}
	if fin.slices != nil {
		out = append(out, timeslicesJSONFile, timeslicesCSVFile)
	}
	if fin.smReport != nil {
		out = append(out, servermetrics.JSONFile, servermetrics.CSVFile)
	}
	if fin.scraped {
		out = append(out, servermetrics.JSONLFile)
	}
	return out
}

// reportOutputs names the files report -o wrote into its folder. The
// scrapes' JSONL is a run's, never report's: report reads it (from a run's
// own folder, which report -o DIR DIR rewrites) and does not remove it.
func reportOutputs(slices *metrics.Slices, srv *serverRebuild) []string {
	out := []string{exportJSONFile, exportCSVFile, exportRecordFile, recordsFile, servermetrics.JSONLFile}
	if slices != nil {
		out = append(out, timeslicesJSONFile, timeslicesCSVFile)
	}
	if srv != nil && srv.rep != nil {
		out = append(out, servermetrics.JSONFile, servermetrics.CSVFile)
	}
	return out
}

// optionalOutputs are the files a run writes into its folder only when
// asked (--slice-duration, server metrics).
var optionalOutputs = []string{timeslicesJSONFile, timeslicesCSVFile, servermetrics.JSONFile, servermetrics.CSVFile, servermetrics.JSONLFile}

// dropStale removes from dir the optional outputs this run did not write
// (wrote): left by an earlier run into the same folder, they would stand
// beside this run's results as if they were its own, and report would
// read another run's scrapes as this one's. It says what it removed.
func dropStale(w io.Writer, dir string, wrote []string, who string) {
	var gone []string
	for _, name := range optionalOutputs {
		if slices.Contains(wrote, name) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(p); err != nil {
			fmt.Fprintf(w, "aiperf-replay: warning: %s, left by an earlier run, is not this %s's and could not be removed: %v\n", p, who, err)
			continue
		}
		gone = append(gone, name)
	}
	if len(gone) > 0 {
		fmt.Fprintf(w, "aiperf-replay: removed %s from %s: an earlier run's or report's, which this %s did not write\n", strings.Join(gone, ", "), dir, who)
	}
}

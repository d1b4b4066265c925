package rundir

import (
	"io"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

// The export files a run (or report -o DIR) writes beside its results, in
// the Python aiperf's names and shapes.
const (
	ExportJSONFile   = "profile_export_aiperf.json"
	ExportCSVFile    = "profile_export_aiperf.csv"
	ExportRecordFile = "profile_export.jsonl"
)

// WriteExports writes the export files into dir, each atomically:
// ExportJSONFile and ExportCSVFile from the summary s, ExportRecordFile
// from the results files (one more pass).
func WriteExports(dir string, s *metrics.Summary, o metrics.Options, run metrics.Run, files []string) error {
	write := func(name string, fn func(io.Writer) error) error {
		return atomicfile.Write(filepath.Join(dir, name), fn)
	}
	if err := write(ExportJSONFile, func(w io.Writer) error { return metrics.WriteJSON(w, s, run) }); err != nil {
		return err
	}
	if err := write(ExportCSVFile, func(w io.Writer) error { return metrics.WriteCSV(w, s) }); err != nil {
		return err
	}
	return write(ExportRecordFile, func(w io.Writer) error {
		rw, err := metrics.NewRecordWriter(w, o)
		if err != nil {
			return err
		}
		var werr error
		err = each(files, func(r *result.Record) bool {
			werr = rw.Write(r)
			return werr == nil
		})
		if err == nil {
			err = werr
		}
		if err != nil {
			return err
		}
		return rw.Flush()
	})
}

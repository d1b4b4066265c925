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
	if err := WriteSummaryExports(dir, s, run); err != nil {
		return err
	}
	return WriteRecordExport(dir, o, files)
}

// WriteSummaryExports writes ExportJSONFile and ExportCSVFile from the
// summary s, each atomically.
func WriteSummaryExports(dir string, s *metrics.Summary, run metrics.Run) error {
	if err := atomicfile.Write(filepath.Join(dir, ExportJSONFile), func(w io.Writer) error { return metrics.WriteJSON(w, s, run) }); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, ExportCSVFile), func(w io.Writer) error { return metrics.WriteCSV(w, s) })
}

// WriteRecordExport writes ExportRecordFile from the results files,
// atomically. It needs no summary, so a run writes it while it summarizes.
func WriteRecordExport(dir string, o metrics.Options, files []string) error {
	return atomicfile.Write(filepath.Join(dir, ExportRecordFile), func(w io.Writer) error {
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

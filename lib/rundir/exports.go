package rundir

import (
	"fmt"
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
// atomically.
func WriteRecordExport(dir string, o metrics.Options, files []string) error {
	e, err := StartRecordExport(dir, o, files)
	if err != nil {
		return err
	}
	return e.Finish(true)
}

// RecordExport is ExportRecordFile being written on another goroutine
// (it needs no summary, so a run or a report writes it while it
// summarizes: the two passes over the records share the wall time).
type RecordExport struct {
	f    *atomicfile.File
	done chan error
}

// StartRecordExport starts writing ExportRecordFile from the results
// files into a temporary file of dir.
func StartRecordExport(dir string, o metrics.Options, files []string) (*RecordExport, error) {
	f, err := atomicfile.Create(filepath.Join(dir, ExportRecordFile))
	if err != nil {
		return nil, err
	}
	e := &RecordExport{f: f, done: make(chan error, 1)}
	go func() { e.done <- writeRecords(f, o, files) }()
	return e, nil
}

// Finish waits for the export and, when keep, commits it; otherwise (the
// work beside it failed) it drops it, so that nothing new is left. Its
// error is the export's own, naming the file.
func (e *RecordExport) Finish(keep bool) error {
	err := <-e.done
	if err != nil || !keep {
		e.f.Abort()
		if err != nil {
			return fmt.Errorf("%s: %w", e.f.Name(), err)
		}
		return nil
	}
	return e.f.Commit()
}

// writeRecords writes the per-record export of files to w.
func writeRecords(w io.Writer, o metrics.Options, files []string) error {
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
}

package replaycmd

import (
	"os"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/rundir"
)

// reportExport is report -o's per-record export, written while the
// summary reads the records (rundir.StartRecordExport): it is committed
// by finish once every other output is written, and dropped otherwise,
// with the folder when report made it and it stayed empty.
type reportExport struct {
	rec     *rundir.RecordExport
	dir     string
	made    bool
	settled bool
}

// startReportExport makes the output folder and starts the export; nil
// without -o.
func startReportExport(dir string, mo metrics.Options, files []string) (*reportExport, error) {
	if dir == "" {
		return nil, nil
	}
	e := &reportExport{dir: dir}
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		e.made = true
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	rec, err := rundir.StartRecordExport(dir, mo, files)
	if err != nil {
		e.removeDir()
		return nil, err
	}
	e.rec = rec
	return e, nil
}

// finish commits the export.
func (e *reportExport) finish() error {
	if e == nil || e.settled {
		return nil
	}
	e.settled = true
	return e.rec.Finish(true)
}

// drop drops an export not finished (report failed).
func (e *reportExport) drop() {
	if e == nil || e.settled {
		return
	}
	e.settled = true
	e.rec.Finish(false)
	e.removeDir()
}

func (e *reportExport) removeDir() {
	if e.made {
		os.Remove(e.dir) // only when empty
	}
}

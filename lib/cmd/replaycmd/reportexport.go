package replaycmd

import (
	"os"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/rundir"
)

// reportExport is report -o's per-record export, written while the
// summary reads the results (rundir.StartRecordExport): it is committed
// by finish once every other output is written. When report fails it is
// dropped, and so is the folder when report made it (the highest folder
// it made, with every output written there): nothing is left half done.
// In a folder that was there, the outputs already written stay, each
// whole (each is written atomically).
type reportExport struct {
	claim   *rundir.Claim // the folder's lock, held until finish or drop
	rec     *rundir.RecordExport
	made    string // the highest folder report made, or ""
	settled bool
}

// startReportExport makes the output folder and starts the export; nil
// without -o.
func startReportExport(dir, html string, mo metrics.Options, files []string) (*reportExport, error) {
	if dir == "" {
		return nil, nil
	}
	e := &reportExport{}
	var err error
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			break
		}
		e.made = d
		if filepath.Dir(d) == d {
			break
		}
	}
	if e.claim, err = rundir.Take(dir, rundir.ClaimOptions{Kind: rundir.KindReport, Follow: []string{html}}); err != nil {
		e.removeDir()
		return nil, err
	}
	rec, err := rundir.StartRecordExport(dir, mo, files)
	if err != nil {
		e.claim.Release()
		e.removeDir()
		return nil, err
	}
	e.rec = rec
	return e, nil
}

// finish commits the export (and, when that fails, drops what report
// made).
func (e *reportExport) finish() error {
	if e == nil || e.settled {
		return nil
	}
	e.settled = true
	err := e.rec.Finish(true)
	e.claim.Release()
	if err != nil {
		e.removeDir()
	}
	return err
}

// drop drops an export not finished (report failed).
func (e *reportExport) drop() {
	if e == nil || e.settled {
		return
	}
	e.settled = true
	e.rec.Finish(false)
	e.claim.Release()
	e.removeDir()
}

func (e *reportExport) removeDir() {
	if e.made != "" {
		os.RemoveAll(e.made) // report made it: it holds report's outputs only
	}
}

// checkReportOut judges an -o folder that holds a run's results: report
// may rewrite a run's own exports there from that run's results alone
// (report -o DIR DIR, with --slice-duration, say: own is true, and report
// then removes none of the folder's files), and refuses it otherwise, a
// merge into one of its runs' folders or any report into another run's:
// the exports would contradict the results beside them. The folder's run
// is told by its id (stdin and concatenated files name no folder), or,
// without run info, by the file itself.
func checkReportOut(dir string, files []string, runs []*result.RunInfo) (own bool, err error) {
	if dir == "" {
		return false, nil
	}
	p, ok := rundir.Results(dir)
	if !ok {
		return false, nil
	}
	pi, err := os.Stat(p)
	if err != nil {
		return false, nil
	}
	its := rundir.Runs([]string{p})[0]
	is := func(i int) bool {
		fi, err := os.Stat(files[i])
		return err == nil && os.SameFile(pi, fi) || its != nil && runs[i] != nil && its.ID != "" && runs[i].ID == its.ID && runs[i].Shard == its.Shard
	}
	switch {
	case len(files) == 1 && is(0):
		return true, nil
	case len(files) == 1:
		return false, base.UsageError("-o %s holds another run's results (%s): the report's exports would contradict them; choose another folder", dir, displayName(p))
	}
	for i := range files {
		if is(i) {
			return false, base.UsageError("-o %s holds the results of %s, one of the runs merged: the merge's exports would replace that run's own; choose another folder", dir, displayName(files[i]))
		}
	}
	return false, base.UsageError("-o %s holds another run's results (%s): the merge's exports would contradict them; choose another folder", dir, displayName(p))
}

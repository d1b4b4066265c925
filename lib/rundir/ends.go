package rundir

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/aiperf/toolkit/lib/result"
)

// endTail is how much of a file's end Ends reads: an end line is under
// 200 bytes, so a last line that does not begin within it is a record.
const endTail = 64 << 10

// Ends returns, for each results file (one run each: SplitRuns), how it
// ends: with its run's end line (result.End), or without one (the run was
// killed, is still running, or was written before runs wrote end lines),
// its last line cut or not. An end line of another run than runs[i] says
// (its run_id) counts as none. It reads the last 64 KiB of each file; a
// file that cannot be read gives a zero RunEnd here (reading it for the
// summary reports why).
func Ends(files []string, runs []*result.RunInfo) []RunEnd {
	ends := make([]RunEnd, len(files))
	for i, name := range files {
		e, cut, err := lastEnd(name)
		if err != nil {
			continue
		}
		if e != nil && i < len(runs) && runs[i] != nil && e.RunID != "" && e.RunID != runs[i].ID {
			e = nil
		}
		ends[i] = RunEnd{End: e, Cut: cut}
	}
	return ends
}

// RunEnd is how a results file ends: with its run's end line (End), or
// without (nil), its last line cut mid-line (Cut: the writer was killed
// while writing it; the decoder leaves it out) or not.
type RunEnd struct {
	End *result.End
	Cut bool
}

// lastEnd returns the end line that is the file's last line, or nil, and
// whether that line was cut (no newline, not JSON).
func lastEnd(name string) (*result.End, bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	off := max(fi.Size()-endTail, 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
		return nil, false, err
	}
	cut := len(b) > 0 && b[len(b)-1] != '\n'
	b = bytes.TrimRight(b, " \t\r\n")
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 && off > 0 {
		return nil, false, nil // a last line longer than the tail: a record (or cut, which the decoder tells)
	}
	var r result.Record
	if result.Parse(bytes.TrimSpace(b[i+1:]), &r) != nil {
		return nil, cut, nil
	}
	return r.End, false, nil
}

// EndWarnings says which runs did not end (no end line) and which were
// interrupted, naming each file (DisplayName) and, for shards, which shard
// it is; merged says the files are summarized as one (report), not each
// on its own (compare's trials). interrupted reports that an end line
// said so. Files without run info (written before results carried it) are
// not judged.
func EndWarnings(files []string, runs []*result.RunInfo, ends []RunEnd, merged bool) (warnings []string, interrupted bool) {
	for i, r := range runs {
		if r == nil {
			continue
		}
		who := DisplayName(files[i])
		if r.Shards > 0 {
			who = fmt.Sprintf("%s (shard %d of %d)", who, r.Shard, r.Shards)
		}
		effect := "its figures cover the part it ran"
		if merged {
			effect = "the merged figures count the part it ran over the others' whole span (its throughput and the merge's are lower than a whole run's)"
		}
		switch e := ends[i].End; {
		case ends[i].Cut:
			warnings = append(warnings, fmt.Sprintf("%s ends in a cut line, left out: its run was killed while writing it; %s", who, effect))
		case e == nil:
			warnings = append(warnings, fmt.Sprintf("%s has no end line: its run was killed, is still running, or was written by an aiperf-replay before 2026-12-04; %s", who, effect))
		case e.Interrupted:
			interrupted = true
			noun := "requests"
			if e.Results == 1 {
				noun = "request"
			}
			warnings = append(warnings, fmt.Sprintf("%s: its run was interrupted (%d %s recorded); %s", who, e.Results, noun, effect))
		}
	}
	return warnings, interrupted
}

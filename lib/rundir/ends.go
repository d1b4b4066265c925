package rundir

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/result"
)

// endTail is how much of a file's end Ends reads first: an end line is
// under 200 bytes, so a complete last line that does not begin within it
// is a record.
const endTail = 64 << 10

// Ends returns, for each results file (one run each: SplitRuns), how it
// ends: with its run's end line (result.End), or without one (written
// before runs wrote end lines, or cut short: a replay commits its results
// whole, end line included), its last line cut or not. An end line of another run than runs[i] says
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
// without (nil), its last line cut short (Cut: not JSON, no newline; the
// decoder leaves it out) or not.
type RunEnd struct {
	End *result.End
	Cut bool
}

// lastEnd returns the end line that is the file's last line, or nil, and
// whether that line was cut short (no newline, not JSON: the decoder
// leaves it out).
func lastEnd(name string) (*result.End, bool, error) {
	f, err := openResults(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	line, unterminated, err := lastLine(f, fi.Size())
	if err != nil {
		return nil, false, err
	}
	var r result.Record
	if result.Parse(line, &r) != nil {
		return nil, unterminated && !jsonx.Valid(line), nil
	}
	return r.End, false, nil
}

// lastLine returns the file's last non-blank line, trimmed, and whether it
// ends without a newline. It reads the last 64 KiB, and further back only
// when the last line is longer and has no newline (a cut record, which
// takes reading whole to tell from a complete one).
func lastLine(f *os.File, size int64) ([]byte, bool, error) {
	for tail := int64(endTail); ; tail *= 4 {
		off := max(size-tail, 0)
		b := make([]byte, size-off)
		if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
			return nil, false, err
		}
		unterminated := len(b) > 0 && b[len(b)-1] != '\n'
		b = bytes.TrimRight(b, " \t\r\n")
		i := bytes.LastIndexByte(b, '\n')
		switch {
		case len(b) == 0 && off > 0 && tail <= result.MaxLine:
			continue // blank lines only: further back
		case i >= 0 || off == 0:
			return bytes.TrimSpace(b[i+1:]), unterminated, nil
		case !unterminated || tail > result.MaxLine:
			return nil, false, nil // a long complete last line: a record, not an end line
		}
	}
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
			warnings = append(warnings, fmt.Sprintf("%s ends in a cut line, left out: the file was cut short (a partial copy: a replay commits its results whole); %s", who, effect))
		case e == nil:
			warnings = append(warnings, fmt.Sprintf("%s has no end line: it was written by an aiperf-replay before 2026-12-04, or cut short (a replay commits its results whole, end line included); %s", who, effect))
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

package replaycmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/result"
)

// maxShardSpread is the spread of the shards' schedule starts past which
// report warns: the shards did not start together (clocks that disagree,
// or a shard that started late), so the merged schedule is not the one
// meant. NTP keeps machines within a few milliseconds of each other.
//
// A shard's start is its first send less that send's offset in its
// schedule (sent − (intended − zero), the zero being the run info's
// start): the first sends themselves differ by the trace's offsets in a
// fixed schedule (shard 1's first session may come 50 ms after shard 0's
// by design), which is no disagreement of clocks.
const maxShardSpread = 10 * time.Millisecond

// runDirs replaces each argument that is a run directory (aiperf-replay
// -o DIR) by DIR/records.jsonl.
func runDirs(args []string) ([]string, error) {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "-" {
			continue
		}
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			p := filepath.Join(a, recordsFile)
			if _, err := os.Stat(p); err != nil {
				return nil, base.UsageError("%s is a folder without a %s (a run's -o DIR holds one)", a, recordsFile)
			}
			out[i] = p
		}
	}
	return out, nil
}

// checkShardsOf refuses records of shards that do not make one replay
// (result.CheckShards) with exit 2, naming the files, and prints its
// warnings.
func checkShardsOf(w io.Writer, files []string, runs []*result.RunInfo, allowMissing bool) error {
	rf := make([]result.RunFile, len(files))
	for i, f := range files {
		rf[i] = result.RunFile{Name: displayName(f), Run: runs[i]}
	}
	warns, err := result.CheckShards(rf, allowMissing)
	var se *result.ShardError
	if errors.As(err, &se) {
		return base.UsageError("%s", se.Msg)
	}
	for _, m := range warns {
		fmt.Fprintf(w, "aiperf-replay: warning: %s\n", m)
	}
	return err
}

// shardNote describes a merge of shards for the summary: how many, what
// each offered, and the spread of their first sends (a warning on ew past
// maxShardSpread). "" when the files are not shards.
func shardNote(ew io.Writer, files []string, runs []*result.RunInfo) (string, error) {
	firsts := map[int]int64{}
	shards, offered := 0, ""
	for i, f := range files {
		r := runs[i]
		if r == nil || r.Shards == 0 {
			continue
		}
		shards = r.Shards
		if offered == "" {
			offered = r.Offered
		}
		first, err := scheduleStart(f, r.StartNS)
		if err != nil {
			return "", err
		}
		if first > 0 {
			firsts[r.Shard] = first
		}
	}
	if shards == 0 {
		return "", nil
	}
	note := fmt.Sprintf("Shards: %d of %d merged", len(firsts), shards)
	if offered != "" {
		note += "; shard 0 offered " + offered
	}
	if spread, early, late := result.ShardSpread(firsts); len(firsts) > 1 {
		d := time.Duration(spread)
		note += fmt.Sprintf("; schedules started within %s (earliest shard %d, latest shard %d)", d.Round(time.Microsecond), early, late)
		if d > maxShardSpread {
			fmt.Fprintf(ew, "aiperf-replay: warning: the shards' schedules started %s apart (shard %d first, shard %d last), more than %s: "+
				"their clocks disagree or a shard started late, so the merged schedule is not the one meant (check NTP and --start-at)\n",
				d.Round(time.Microsecond), early, late, maxShardSpread)
		}
	}
	return note, nil
}

// scheduleStart returns when a shard's schedule started, as its first send
// shows it: that send's time less its offset in the schedule whose zero is
// zero (the run info's start; without one, the send's own time). 0 when
// the file has no record.
func scheduleStart(name string, zero int64) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, &base.Error{Code: base.ExitTrouble, Err: err}
	}
	defer f.Close()
	dec := result.NewDecoder(f, displayName(name))
	var r result.Record
	var first, start int64
	for {
		err := dec.Next(&r)
		if err == io.EOF {
			return start, nil
		}
		if err != nil {
			return 0, &base.Error{Code: base.ExitTrouble, Err: err}
		}
		if r.SentNS > 0 && (first == 0 || r.SentNS < first) {
			first = r.SentNS
			start = r.SentNS
			if zero > 0 && r.IntendedNS >= zero {
				start = zero + r.LatenessNS()
			}
		}
	}
}

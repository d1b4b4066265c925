package rundir

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/aiperf/toolkit/lib/result"
)

// MaxShardSpread is the spread of the shards' schedule starts past which
// ShardNote warns: the shards did not start together (clocks that
// disagree, or a shard that started late), so the merged schedule is not
// the one meant. NTP keeps machines within a few milliseconds of each
// other.
//
// A shard's start is its first send less that send's offset in its
// schedule (sent − (intended − zero), the zero being the run info's
// start): the first sends themselves differ by the trace's offsets in a
// fixed schedule (shard 1's first session may come 50 ms after shard 0's
// by design), which is no disagreement of clocks.
const MaxShardSpread = 10 * time.Millisecond

// CheckShards judges whether files (with their run info) are the shards
// of one replay (result.CheckShards), naming them by DisplayName. A
// *result.ShardError refuses the merge.
func CheckShards(files []string, runs []*result.RunInfo, allowMissing bool) (warnings []string, err error) {
	rf := make([]result.RunFile, len(files))
	for i, f := range files {
		rf[i] = result.RunFile{Name: DisplayName(f), Run: runs[i]}
	}
	return result.CheckShards(rf, allowMissing)
}

// ShardNote describes a merge of shards for the summary: how many, what
// each offered, and the spread of their schedule starts, with a warning
// past MaxShardSpread. note is "" when the files are not shards.
func ShardNote(files []string, runs []*result.RunInfo) (note string, warnings []string, err error) {
	firsts := map[int]int64{}
	shards, offered, by := 0, "", -1
	for i, f := range files {
		r := runs[i]
		if r == nil || r.Shards == 0 {
			continue
		}
		shards = r.Shards
		// the lowest shard's, named by its number (the files may come in
		// any order, and shard 0 may be missing)
		if r.Offered != "" && (by < 0 || r.Shard < by) {
			offered, by = r.Offered, r.Shard
		}
		first, err := scheduleStart(f, r.StartNS)
		if err != nil {
			return "", nil, err
		}
		if first > 0 {
			firsts[r.Shard] = first
		}
	}
	if shards == 0 {
		return "", nil, nil
	}
	note = fmt.Sprintf("Shards: %d of %d merged", len(firsts), shards)
	if offered != "" {
		note += fmt.Sprintf("; shard %d offered %s", by, offered)
	}
	if spread, early, late := result.ShardSpread(firsts); len(firsts) > 1 {
		d := time.Duration(spread)
		note += fmt.Sprintf("; schedules started within %s (earliest shard %d, latest shard %d)", d.Round(time.Microsecond), early, late)
		if d > MaxShardSpread {
			warnings = append(warnings, fmt.Sprintf("the shards' schedules started %s apart (shard %d first, shard %d last), more than %s: "+
				"their clocks disagree or a shard started late, so the merged schedule is not the one meant (check NTP and --start-at)",
				d.Round(time.Microsecond), early, late, MaxShardSpread))
		}
	}
	hosts, clockWarnings := shardClocks(runs)
	if len(hosts) > 1 {
		note += fmt.Sprintf("; on %d machines", len(hosts))
	}
	return note, append(warnings, clockWarnings...), nil
}

// shardClocks returns the machines the shards ran on (by kernel boot id,
// or hostname where a run has none) and, when there are several, a
// warning for each shard whose kernel did not call its clock synchronized:
// each shard reads its schedule off its own clock (--start-at too), so
// clocks that disagree shift the shards' schedules against each other and
// the spread of their starts cannot show it. Shards on one machine share
// its clock, whatever its state. The kernel's maximum error is not judged:
// it is a worst case that grows between a daemon's updates, past 10 ms on
// most synchronized machines.
func shardClocks(runs []*result.RunInfo) (machines []string, warnings []string) {
	machine := func(r *result.RunInfo) string {
		if r.BootID != "" {
			return "boot " + r.BootID
		}
		return r.Host
	}
	for _, r := range runs {
		if r != nil && r.Shards > 0 && machine(r) != "" && !slices.Contains(machines, machine(r)) {
			machines = append(machines, machine(r))
		}
	}
	if len(machines) < 2 {
		return machines, nil
	}
	for _, r := range runs {
		if r == nil || r.Shards == 0 || r.Clock == nil || r.Clock.Synced {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("shard %d/%d ran on %s, whose kernel did not call its clock synchronized (adjtimex: no NTP or PTP daemon told it so; chrony does only with rtcsync): "+
			"the shards ran on %d machines, and a disagreement of their clocks shifts their schedules without showing in the spread of their starts (check the clocks' offsets)",
			r.Shard, r.Shards, orUnknown(r.Host), len(machines)))
	}
	return machines, warnings
}

func orUnknown(host string) string {
	if host == "" {
		return "an unnamed machine"
	}
	return host
}

// scheduleStart returns when a shard's schedule started, as its first send
// shows it: that send's time less its offset in the schedule whose zero is
// zero (the run info's start; without one, the send's own time). 0 when
// the file has no record.
func scheduleStart(name string, zero int64) (int64, error) {
	f, err := openResults(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	dec := result.NewDecoder(f, DisplayName(name))
	var r result.Record
	var first, start int64
	for {
		err := dec.Next(&r)
		if err == io.EOF {
			return start, nil
		}
		if err != nil {
			return 0, err
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

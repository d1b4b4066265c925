package result

import (
	"fmt"
	"slices"
	"strings"
)

// RunFile is a records file and the run info of its first record (nil for
// a file without one: written before records carried it, or empty).
type RunFile struct {
	Name string
	Run  *RunInfo
}

// ShardError refuses a merge of records files whose shards do not make
// one replay: the same shard twice, shards of different counts, a whole
// run beside shards, or (unless allowed) a shard missing.
type ShardError struct{ Msg string }

func (e *ShardError) Error() string { return e.Msg }

// CheckShards judges whether files are the shards of one replay (run with
// aiperf-replay --shard i/N), so that their merge is the summary one run
// sending the same requests would give. Files without run info, and runs
// that are not sharded, are not judged here (see RunInfo.Diff and
// SameStore). The returned warnings name what the merge lacks or mixes;
// a *ShardError refuses it: a shard given twice (its requests would count
// twice), shards of replays of different shard counts, a whole run beside
// shards (its requests are theirs too), or a missing shard unless
// allowMissing (then a warning).
func CheckShards(files []RunFile, allowMissing bool) (warnings []string, err error) {
	var sharded, whole []RunFile
	for _, f := range files {
		switch {
		case f.Run == nil:
		case f.Run.Shards > 0:
			sharded = append(sharded, f)
		default:
			whole = append(whole, f)
		}
	}
	if len(sharded) == 0 {
		for i := 1; i < len(whole); i++ {
			if whole[i].Run.ID != whole[0].Run.ID {
				warnings = append(warnings, fmt.Sprintf("%s and %s are two runs of the whole store, not shards of one replay (aiperf-replay --shard): the summary counts the requests of both, and its throughputs are over the span from the first's start to the last's end, pauses between them included",
					whole[0].Name, whole[i].Name))
				break
			}
		}
		return warnings, nil
	}
	a := sharded[0]
	if len(whole) > 0 {
		return nil, &ShardError{fmt.Sprintf("%s is a whole run and %s shard %d/%d of one: the shard's requests are the whole run's too",
			whole[0].Name, a.Name, a.Run.Shard, a.Run.Shards)}
	}
	n := a.Run.Shards
	by := make([]string, n)
	for _, f := range sharded {
		r := f.Run
		if r.Shards != n {
			return nil, &ShardError{fmt.Sprintf("%s is shard %d/%d and %s shard %d/%d: shards of replays of different shard counts hold different sessions",
				a.Name, a.Run.Shard, n, f.Name, r.Shard, r.Shards)}
		}
		if prev := by[r.Shard]; prev != "" {
			return nil, &ShardError{fmt.Sprintf("%s and %s are both shard %d/%d: its requests would count twice", prev, f.Name, r.Shard, n)}
		}
		by[r.Shard] = f.Name
	}
	var missing []string
	for i, name := range by {
		if name == "" {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("shard%s %s of the replay %s missing: the summary would lack %s requests",
			plural(len(missing)), strings.Join(missing, ", "), isAre(len(missing)), theirs(len(missing)))
		if !allowMissing {
			return nil, &ShardError{msg + " (--allow-missing merges the shards given)"}
		}
		warnings = append(warnings, msg)
	}
	return warnings, nil
}

// ShardSpread is the spread of the shards' first sends: the latest first
// send minus the earliest, over the shards of firsts (shard → its first
// sent_unix_ns), and the two shards. Machines whose clocks disagree show
// it here, as do shards that started late.
func ShardSpread(firsts map[int]int64) (spread int64, early, late int) {
	keys := make([]int, 0, len(firsts))
	for k := range firsts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) < 2 {
		return 0, 0, 0
	}
	early, late = keys[0], keys[0]
	for _, k := range keys {
		if firsts[k] < firsts[early] {
			early = k
		}
		if firsts[k] > firsts[late] {
			late = k
		}
	}
	return firsts[late] - firsts[early], early, late
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func theirs(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

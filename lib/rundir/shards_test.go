package rundir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// TestScheduleStartsOfFixedShards: shards of a fixed schedule started on
// one instant (--start-at, zero 1000) whose first sessions lie at different
// trace times (0, 300 and 600 ms) started together: no warning. A shard
// whose first send was 40 ms late did not.
func TestScheduleStartsOfFixedShards(t *testing.T) {
	dir := t.TempDir()
	const zero, ms = int64(1_000_000_000), int64(1_000_000)
	write := func(name string, intended, late int64) string {
		p := filepath.Join(dir, name)
		line := `{"v":1,"record":0,"session":"a","turn":0,"phase":"profiling","intended_unix_ns":` +
			itoa(zero+intended) + `,"sent_unix_ns":` + itoa(zero+intended+late) + `,"end_unix_ns":` + itoa(zero+intended+late+ms) + "}\n"
		if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(shard int) *result.RunInfo { return &result.RunInfo{StartNS: zero, Shard: shard, Shards: 3} }
	files := []string{write("a", 0, ms/10), write("b", 300*ms, ms/5), write("c", 600*ms, ms/10)}
	runs := []*result.RunInfo{run(0), run(1), run(2)}
	note, warns, err := ShardNote(files, runs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "schedules started within 100µs") || len(warns) != 0 {
		t.Errorf("note %q, warnings %q: want a 100µs spread (the lateness differences) and no warning", note, warns)
	}
	files[1] = write("b2", 300*ms, 40*ms)
	note, warns, err = ShardNote(files, runs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "schedules started within 39.9ms (earliest shard 0, latest shard 1)") || len(warns) != 1 || !strings.HasPrefix(warns[0], "the shards' schedules started 39.9ms apart") {
		t.Errorf("note %q, warnings %q: want a 39.9ms spread and a warning", note, warns)
	}
	if note, warns, err := ShardNote(files, make([]*result.RunInfo, len(files))); note != "" || warns != nil || err != nil {
		t.Errorf("not shards: got %q, %q, %v; want nothing", note, warns, err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

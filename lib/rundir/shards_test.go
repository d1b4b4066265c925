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

// TestShardClocks: shards on several machines warn for each clock the
// kernel did not hold within MaxShardSpread; shards on one machine share
// its clock, whatever its state, and say nothing.
func TestShardClocks(t *testing.T) {
	unsynced := &result.ClockInfo{MaxErrorUS: 16_000_000}
	loose := &result.ClockInfo{Synced: true, MaxErrorUS: 250_000}
	held := &result.ClockInfo{Synced: true, MaxErrorUS: 1_200}
	run := func(shard int, host string, c *result.ClockInfo) *result.RunInfo {
		return &result.RunInfo{Shard: shard, Shards: 3, Host: host, Clock: c}
	}
	hosts, warns := shardClocks([]*result.RunInfo{run(0, "a", unsynced), run(1, "a", unsynced), run(2, "a", loose)})
	if len(hosts) != 1 || warns != nil {
		t.Errorf("one machine: %q, %q; want no warning", hosts, warns)
	}
	hosts, warns = shardClocks([]*result.RunInfo{run(0, "a", held), run(1, "b", unsynced), run(2, "c", loose)})
	if len(hosts) != 3 || len(warns) != 2 ||
		!strings.HasPrefix(warns[0], "shard 1/3 ran on b, whose clock was not synchronized (adjtimex: no NTP or PTP holds it): the shards ran on 3 machines") ||
		!strings.HasPrefix(warns[1], "shard 2/3 ran on c, whose clock may be off by up to 250ms (adjtimex's maximum error), more than 10ms") {
		t.Errorf("three machines: %q, %q", hosts, warns)
	}
	// runs that say nothing of their clock (older records) warn nothing
	if _, warns := shardClocks([]*result.RunInfo{run(0, "a", nil), run(1, "b", nil), nil}); warns != nil {
		t.Errorf("unknown clocks: %q", warns)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

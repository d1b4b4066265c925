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

// TestShardClocks: shards on several machines (told apart by boot id,
// else hostname) warn for each clock the kernel did not call synchronized;
// shards on one machine share its clock, whatever its state, and say
// nothing, nor does a synchronized clock's maximum error (a worst case
// that grows between updates).
func TestShardClocks(t *testing.T) {
	unsynced := &result.ClockInfo{MaxErrorUS: 16_000_000}
	synced := &result.ClockInfo{Synced: true, MaxErrorUS: 250_000}
	run := func(shard int, host, boot string, c *result.ClockInfo) *result.RunInfo {
		return &result.RunInfo{Shard: shard, Shards: 3, Host: host, BootID: boot, Clock: c}
	}
	machines, warns := shardClocks([]*result.RunInfo{run(0, "a", "", unsynced), run(1, "a", "", unsynced), run(2, "a", "", synced)})
	if len(machines) != 1 || warns != nil {
		t.Errorf("one machine: %q, %q; want no warning", machines, warns)
	}
	// pods on one node: other hostnames, one kernel
	machines, warns = shardClocks([]*result.RunInfo{run(0, "pod-0", "k1", unsynced), run(1, "pod-1", "k1", unsynced), run(2, "pod-2", "k1", unsynced)})
	if len(machines) != 1 || warns != nil {
		t.Errorf("one kernel: %q, %q; want no warning", machines, warns)
	}
	// clones: one hostname, three kernels
	machines, warns = shardClocks([]*result.RunInfo{run(0, "localhost", "k1", synced), run(1, "localhost", "k2", unsynced), run(2, "localhost", "k3", synced)})
	if len(machines) != 3 || len(warns) != 1 ||
		!strings.HasPrefix(warns[0], "shard 1/3 ran on localhost, whose kernel did not call its clock synchronized (adjtimex") ||
		!strings.Contains(warns[0], "the shards ran on 3 machines") {
		t.Errorf("three machines: %q, %q", machines, warns)
	}
	// runs that say nothing of their clock (older records) warn nothing
	if _, warns := shardClocks([]*result.RunInfo{run(0, "a", "", nil), run(1, "b", "", nil), nil}); warns != nil {
		t.Errorf("unknown clocks: %q", warns)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

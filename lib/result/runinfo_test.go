package result

import (
	"reflect"
	"strings"
	"testing"
)

func sampleRun() *RunInfo {
	return &RunInfo{ID: "9f00", Tool: "aiperf-replay dev", StartNS: 1_700_000_000_000_000_000, Shard: 1, Shards: 4,
		Host: "node7", BootID: "3f1c", Clock: &ClockInfo{Synced: true, MaxErrorUS: 1500},
		Store: StoreInfo{Path: "s.aipk", SHA256: "ab12", Records: 12, Sessions: 4},
		URL:   "http://127.0.0.1:8000", Path: "/v1/chat/completions", Endpoint: "chat", Model: "m", Streaming: true,
		Schedule: "concurrency", Config: []byte(`{"concurrency":4,"store":"s.aipk"}`)}
}

// TestRunInfoLine: the run info rides on a record, right after "v", and
// decodes to what was written, with the record's own fields intact.
func TestRunInfoLine(t *testing.T) {
	r := Record{Record: 3, SentNS: 10, EndNS: 20, ChunkOffsetsNS: []int64{5}, Status: 200, Streamed: true, Run: sampleRun()}
	line := Append(nil, &r)
	want := `{"v":1,"run":{"id":"9f00","tool":"aiperf-replay dev","start_unix_ns":1700000000000000000,"shard":1,"shards":4,` +
		`"host":"node7","boot_id":"3f1c","clock":{"synced":true,"max_error_us":1500},` +
		`"store":{"path":"s.aipk","sha256":"ab12","records":12,"sessions":4},"url":"http://127.0.0.1:8000",` +
		`"path":"/v1/chat/completions","endpoint":"chat","model":"m","streaming":true,"schedule":"concurrency",` +
		`"config":{"concurrency":4,"store":"s.aipk"}},"record":3,"turn":0,"intended_unix_ns":0,"sent_unix_ns":10,"end_unix_ns":20,` +
		`"chunk_offsets_ns":[5],"status":200,"streamed":true}` + "\n"
	if string(line) != want {
		t.Fatalf("got  %s\nwant %s", line, want)
	}
	var got Record
	if err := Parse([]byte(strings.TrimSpace(string(line))), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", got, r)
	}
	// An unsharded run writes neither shard field; a line without run
	// info reads as before.
	r.Run.Shard, r.Run.Shards = 0, 0
	if line := string(Append(nil, &r)); strings.Contains(line, `"shard`) {
		t.Errorf("unsharded run: %s", line)
	}
	var old Record
	if err := Parse([]byte(`{"v":1,"record":4,"sent_unix_ns":10}`), &old); err != nil || old.Run != nil || old.Streamed {
		t.Errorf("old line: %+v, %v", old, err)
	}
}

func TestRunInfoErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"v":1,"run":1}`, "run: not an object"},
		{`{"v":1,"run":{"streaming":"yes"}}`, "run.streaming: not a boolean"},
		{`{"v":1,"run":{"config":[1]}}`, "run.config: not an object"},
		{`{"v":1,"run":{"shard":4,"shards":4}}`, "run.shard: 4 is not below shards 4"},
		{`{"v":1,"run":{"store":{"records":-1}}}`, "run.store.records: -1 out of range"},
		{`{"v":1,"streamed":1}`, "streamed: not a boolean"},
		{`{"v":1,"run":{"clock":[]}}`, "run.clock: not an object"},
		{`{"v":1,"run":{"clock":{"synced":1}}}`, "run.clock.synced: not a boolean"},
		{`{"v":1,"run":{"clock":{"max_error_us":-5}}}`, "run.clock.max_error_us: -5 out of range"},
	} {
		var r Record
		err := Parse([]byte(tc.in), &r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestRunInfoDiff: settings that differ are named with both values; the
// run's identity and the ignored config members are not settings.
func TestRunInfoDiff(t *testing.T) {
	a, b := sampleRun(), sampleRun()
	b.ID, b.StartNS, b.Shard, b.Tool = "other", 5, 2, "aiperf-replay v2"
	b.Store.Path = "elsewhere/s.aipk"
	b.Config = []byte(`{"concurrency":4,"store":"elsewhere/s.aipk"}`)
	if d := a.Diff(b, "store"); len(d) != 0 {
		t.Errorf("same settings: Diff = %q", d)
	}
	if same, known := a.SameStore(b); !same || !known {
		t.Errorf("SameStore = %v, %v; want true, true", same, known)
	}
	b.Schedule, b.Config = "fixed", []byte(`{"concurrency":8,"rate":2}`)
	want := []string{`schedule: "concurrency", "fixed"`, "concurrency: 4, 8", "rate: (absent), 2"}
	if d := a.Diff(b, "store"); !reflect.DeepEqual(d, want) {
		t.Errorf("Diff = %q, want %q", d, want)
	}
	b.Store.SHA256 = "cd34"
	if same, known := a.SameStore(b); same || !known {
		t.Errorf("other store: SameStore = %v, %v; want false, true", same, known)
	}
	b.Store.SHA256 = ""
	if _, known := a.SameStore(b); known {
		t.Error("a store without checksum: SameStore known")
	}
}

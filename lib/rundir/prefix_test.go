package rundir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aiperf/toolkit/lib/store"
)

// TestPrefix: requests are taken in send order, not record order;
// warmup requests fill the cache but are not counted; requests the server
// did not serve are left out.
func TestPrefix(t *testing.T) {
	dir := t.TempDir()
	sp := filepath.Join(dir, "s.aipk")
	spec := &store.Spec{
		Sessions:  []string{"a", "b", "c"},
		BlockSize: 4,
		Records: []store.Record{
			{Entry: store.Entry{Line: 1, Session: 0, InputTokens: 8}, Payload: []byte("{}"), HashIDs: []uint64{1, 2}},
			{Entry: store.Entry{Line: 2, Session: 1, InputTokens: 6}, Payload: []byte("{}"), HashIDs: []uint64{1, 3}},
			{Entry: store.Entry{Line: 3, Session: 2, InputTokens: 8}, Payload: []byte("{}"), HashIDs: []uint64{1, 2}},
		},
	}
	if err := store.WriteSpec(sp, spec); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(sp, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Sent: record 2 (warmup) first, then 1, then 0, then 2 again.
	recs := `{"v":1,"record":2,"session":"c","turn":0,"phase":"warmup","sent_unix_ns":1750000000000000010,"end_unix_ns":1750000000000000011}
{"v":1,"record":0,"session":"a","turn":0,"phase":"profiling","sent_unix_ns":1750000000000000030,"end_unix_ns":1750000000000000031}
{"v":1,"record":1,"session":"b","turn":0,"phase":"profiling","sent_unix_ns":1750000000000000020,"end_unix_ns":1750000000000000021}
{"v":1,"record":2,"session":"c","turn":0,"phase":"profiling","sent_unix_ns":1750000000000000040,"end_unix_ns":1750000000000000041}
{"v":1,"record":0,"session":"a","turn":0,"phase":"profiling","status":503,"error":{"code":503,"type":"Service Unavailable","message":""},"sent_unix_ns":1750000000000000050,"end_unix_ns":1750000000000000051}
{"v":1,"record":1,"session":"b","turn":0,"phase":"profiling","status":0,"error":{"code":0,"type":"ConnectionError","message":"refused"},"sent_unix_ns":1750000000000000060,"end_unix_ns":1750000000000000061}
{"v":1,"record":1,"session":"b","turn":0,"phase":"profiling","status":0,"error":{"code":0,"type":"TimeoutError","message":"no complete response within 1s"},"sent_unix_ns":1750000000000000070,"end_unix_ns":1750000000000000071,"http":{"data_sent":120}}
{"v":1,"record":0,"session":"a","turn":0,"phase":"profiling","status":0,"error":{"code":499,"type":"RequestCancellationError","message":"not sent: the grace period ended"},"cancelled":true,"sent_unix_ns":1750000000000000080,"end_unix_ns":1750000000000000080}
`
	rp := filepath.Join(dir, "records.jsonl")
	if err := os.WriteFile(rp, []byte(recs), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := Prefix(st, []string{rp}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The 503, the refused connection and the request cancelled before it
	// was written were not served: left out; the
	// timed-out request was (record 1 [1 3] again: 6 tokens, all seen).
	// Totals below without it: 3 requests, 20 of 22; with it 4, 28 of 30.
	// Warmup [1 2] fills the cache. Record 1 [1 3]: 1 seen, 4 tokens.
	// Record 0 [1 2]: all seen, 8. Record 2: 8. Ideal 20 of 22.
	// LRU of 1 block: warmup leaves {2}; record 1 misses (leaves {3}),
	// record 0 misses ({2}), record 2 misses: 0.
	if ps.Requests != 4 || ps.PromptTokens != 28 || ps.IdealHitTokens != 26 {
		t.Errorf("got %d requests, %d of %d tokens, want 4, 26 of 28", ps.Requests, ps.IdealHitTokens, ps.PromptTokens)
	}
	if ps.LRU == nil || ps.LRU.HitTokens != 0 || ps.LRU.CapacityBlocks != 1 {
		t.Errorf("LRU: got %+v, want 0 hit tokens of a 1-block cache", ps.LRU)
	}
}

// TestShowPath: a recorded path under the working folder is shown
// relative to it, one elsewhere (or relative already) as it is.
func TestShowPath(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		filepath.Join(wd, "s.aipk"):               "s.aipk",
		filepath.Join(wd, "sub", "s.aipk"):        filepath.Join("sub", "s.aipk"),
		filepath.Join(filepath.Dir(wd), "x.aipk"): filepath.Join(filepath.Dir(wd), "x.aipk"),
		filepath.Join(wd, "..x.aipk"):             "..x.aipk",
		"rel/s.aipk":                              "rel/s.aipk",
	} {
		if got := ShowPath(in); got != want {
			t.Errorf("ShowPath(%q) = %q, want %q", in, got, want)
		}
	}
}

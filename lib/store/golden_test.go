package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden store files in testdata (then review the diff: a v1 file must never change)")

// goldenSmall is testdata/v1-small.aipk: interleaved multi-turn sessions (so
// the file has a lookup table), a session without turns, every entry flag,
// an empty and a binary payload, and metadata.
func goldenSmall() *Spec {
	return &Spec{
		Meta: map[string]string{
			"endpoint":  "/v1/chat/completions",
			"model":     "Qwen/Qwen3-0.6B",
			"streaming": "true",
		},
		Sessions: []string{"conv-a", "conv-b", "conv-empty", "日本"},
		Records: []Record{
			{Entry{Line: 1, Session: 0, Turn: 0, TimeNS: 0, Flags: FlagTimestamp | FlagMaxTokens, MaxTokens: 128, InputTokens: 512},
				[]byte(`{"model":"Qwen/Qwen3-0.6B","messages":[{"role":"user","content":"hello"}],"max_tokens":128}`), nil},
			{Entry{Line: 2, Session: 1, Turn: 0, TimeNS: 1_500_000, Flags: FlagTimestamp, InputTokens: 1024},
				[]byte(`{"model":"Qwen/Qwen3-0.6B","messages":[{"role":"user","content":"b0"}]}`), nil},
			{Entry{Line: 3, Session: 0, Turn: 1, TimeNS: 250_000_000, Flags: FlagDelay | FlagMaxTokens, MaxTokens: 64},
				[]byte(`{"model":"Qwen/Qwen3-0.6B","messages":[{"role":"user","content":"a1"}],"max_tokens":64}`), nil},
			{Entry{Line: 5, Session: 3, Turn: 0, Flags: FlagVerbatim},
				[]byte{}, nil},
			{Entry{Line: 4, Session: 1, Turn: 1, TimeNS: 1 << 40, Flags: FlagDelay, InputTokens: 7},
				[]byte("\x00\x01\x02\xff binary \n"), nil},
			{Entry{Line: 6, Session: 0, Turn: 2, TimeNS: -1, Flags: FlagVerbatim, MaxTokens: 4294967295, InputTokens: 4294967295},
				[]byte(`{"verbatim":true}`), nil},
		},
	}
}

// goldenGrouped is testdata/v1-grouped.aipk: single-turn sessions in order,
// the layout without a lookup table, and no metadata.
func goldenGrouped() *Spec {
	return &Spec{
		Sessions: []string{"0", "1", "2"},
		Records: []Record{
			{Entry{Line: 1, Session: 0, TimeNS: 0, Flags: FlagTimestamp}, []byte(`{"prompt":"a"}`), nil},
			{Entry{Line: 2, Session: 1, TimeNS: 10, Flags: FlagTimestamp}, []byte(`{"prompt":"bb"}`), nil},
			{Entry{Line: 3, Session: 2, TimeNS: 20, Flags: FlagTimestamp}, []byte(`{"prompt":"ccc"}`), nil},
		},
	}
}

// goldenHashes is testdata/v2-hashes.aipk: records with and without
// hash_ids (the first has none, so the writer starts the section late), a
// partial last block, and interleaved sessions.
func goldenHashes() *Spec {
	return &Spec{
		Meta:      map[string]string{"model": "m"},
		Sessions:  []string{"a", "b"},
		BlockSize: 512,
		Records: []Record{
			{Entry{Line: 1, Session: 0, Flags: FlagTimestamp, InputTokens: 10}, []byte(`{"prompt":"x"}`), nil},
			{Entry{Line: 2, Session: 1, TimeNS: 5, Flags: FlagTimestamp, InputTokens: 1000}, []byte(`{"prompt":"y"}`), []uint64{1, 2}},
			{Entry{Line: 3, Session: 0, Turn: 1, TimeNS: 7, Flags: FlagTimestamp, InputTokens: 1100}, []byte(`{"prompt":"z"}`), []uint64{1, 3, 1 << 63}},
		},
	}
}

// The SHA-256 of each golden file: a golden file never changes, so a change
// here is only right together with a new format version (and a new file).
var goldens = []struct {
	file    string
	spec    func() *Spec
	sha256  string
	grouped bool
	version uint32
}{
	{"v1-small.aipk", goldenSmall, "5775515d915d70b056dd844ea7e2a4202b390f39cb799aa9be695178fd738627", false, 1},
	{"v1-grouped.aipk", goldenGrouped, "e0227fde883bec32a40af963f9b5ed8a8024bea09ae6bc366665ea8a2a32d059", true, 1},
	{"v2-hashes.aipk", goldenHashes, "aa4517d70ba3a628943387f8f54166ad6fd45eea53ea3704e5f17d5c15f37921", false, 2},
}

func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.file, func(t *testing.T) {
			path := filepath.Join("testdata", g.file)
			if *update {
				if err := WriteSpec(path, g.spec()); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); got != g.sha256 {
				t.Errorf("sha256 of %s: got %s, want %s", path, got, g.sha256)
			}

			r, err := Open(path, OpenOptions{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer r.Close()
			spec := g.spec()
			checkReader(t, r, spec)
			if got := r.lookup == nil; got != g.grouped {
				t.Errorf("grouped layout: got %v, want %v", got, g.grouped)
			}
			if got := r.Version(); got != g.version {
				t.Errorf("Version: got %d, want %d", got, g.version)
			}
			if got, want := r.Size(), int64(len(b)); got != want {
				t.Errorf("Size: got %d, want %d", got, want)
			}

			// Writing the spec again gives the same bytes.
			if again := image(t, spec); !bytes.Equal(again, b) {
				t.Errorf("writing %s again: got %d different bytes, want the golden file's %d", g.file, len(again), len(b))
			}
		})
	}
}

// TestGoldenSmallFields spells the small golden file's content out field by
// field, independent of goldenSmall, so that a changed fixture and an
// -update cannot slip through together.
func TestGoldenSmallFields(t *testing.T) {
	r, err := Open(filepath.Join("testdata", "v1-small.aipk"), OpenOptions{Prefault: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, want := r.Len(), 6; got != want {
		t.Fatalf("Len: got %d, want %d", got, want)
	}
	wantEntries := []Entry{
		{Line: 1, Session: 0, Turn: 0, TimeNS: 0, MaxTokens: 128, InputTokens: 512, Flags: 5},
		{Line: 2, Session: 1, Turn: 0, TimeNS: 1500000, MaxTokens: 0, InputTokens: 1024, Flags: 1},
		{Line: 3, Session: 0, Turn: 1, TimeNS: 250000000, MaxTokens: 64, InputTokens: 0, Flags: 6},
		{Line: 5, Session: 3, Turn: 0, TimeNS: 0, MaxTokens: 0, InputTokens: 0, Flags: 8},
		{Line: 4, Session: 1, Turn: 1, TimeNS: 1099511627776, MaxTokens: 0, InputTokens: 7, Flags: 2},
		{Line: 6, Session: 0, Turn: 2, TimeNS: -1, MaxTokens: 4294967295, InputTokens: 4294967295, Flags: 8},
	}
	wantLens := []int{91, 71, 87, 0, 13, 17}
	for i, want := range wantEntries {
		if got := r.Entry(i); got != want {
			t.Errorf("Entry(%d): got %+v, want %+v", i, got, want)
		}
		if got := len(r.Payload(i)); got != wantLens[i] {
			t.Errorf("len(Payload(%d)): got %d, want %d", i, got, wantLens[i])
		}
	}
	if got, want := string(r.Payload(4)), "\x00\x01\x02\xff binary \n"; got != want {
		t.Errorf("Payload(4): got %q, want %q", got, want)
	}
	wantSessions := []struct {
		id   string
		recs []int
	}{{"conv-a", []int{0, 2, 5}}, {"conv-b", []int{1, 4}}, {"conv-empty", nil}, {"日本", []int{3}}}
	if got := r.NumSessions(); got != len(wantSessions) {
		t.Fatalf("NumSessions: got %d, want %d", got, len(wantSessions))
	}
	for s, want := range wantSessions {
		if got := r.SessionID(uint32(s)); got != want.id {
			t.Errorf("SessionID(%d): got %q, want %q", s, got, want.id)
		}
		if got := r.SessionLen(uint32(s)); got != len(want.recs) {
			t.Errorf("SessionLen(%d): got %d, want %d", s, got, len(want.recs))
		}
		for turn, rec := range want.recs {
			if got, ok := r.Lookup(uint32(s), uint32(turn)); !ok || got != rec {
				t.Errorf("Lookup(%d, %d): got %d, %v, want %d, true", s, turn, got, ok, rec)
			}
		}
	}
	meta := r.Meta()
	for k, v := range map[string]string{"endpoint": "/v1/chat/completions", "model": "Qwen/Qwen3-0.6B", "streaming": "true"} {
		if meta[k] != v {
			t.Errorf("Meta[%q]: got %q, want %q", k, meta[k], v)
		}
	}
	if len(meta) != 3 {
		t.Errorf("Meta: got %d keys, want 3", len(meta))
	}
	if got, want := r.DataBytes(), int64(91+71+87+0+13+17); got != want {
		t.Errorf("DataBytes: got %d, want %d", got, want)
	}
	if !r.HasTimestamps() {
		t.Errorf("HasTimestamps: got false, want true")
	}
	if err := r.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestGoldenHashesFields reads the hashes section of the v2 golden file
// byte by byte, independent of the reader: block size, starts and ids.
func TestGoldenHashesFields(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "v2-hashes.aipk"))
	if err != nil {
		t.Fatal(err)
	}
	if got := le.Uint32(b[8:]); got != 2 {
		t.Fatalf("version: got %d, want 2", got)
	}
	off, size := le.Uint64(b[144:]), le.Uint64(b[152:])
	metaEnd := le.Uint64(b[48+16*5:]) + le.Uint64(b[48+16*5+8:])
	if off != metaEnd || off+size != uint64(len(b))-trailerSize {
		t.Fatalf("hashes section at %d+%d: want it between the meta's end %d and the trailer at %d", off, size, metaEnd, len(b)-trailerSize)
	}
	var words []uint64
	for i := off; i < off+size; i += 8 {
		words = append(words, le.Uint64(b[i:]))
	}
	// block size 512 | reserved 0, starts 0 0 2 5, ids 1 2 1 3 2^63.
	want := []uint64{512, 0, 0, 2, 5, 1, 2, 1, 3, 1 << 63}
	if !slices.Equal(words, want) {
		t.Errorf("hashes section words: got %v, want %v", words, want)
	}
	r, err := OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.BlockSize(); got != 512 {
		t.Errorf("BlockSize: got %d, want 512", got)
	}
	for i, w := range [][]uint64{nil, {1, 2}, {1, 3, 1 << 63}} {
		if got := r.AppendHashIDs(nil, i); !slices.Equal(got, w) || r.NumHashIDs(i) != len(w) {
			t.Errorf("record %d: got %v (%d), want %v", i, got, r.NumHashIDs(i), w)
		}
	}
}

package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	big := func(i, n int) []byte { return payloadFor(i, n) }
	tests := []struct {
		name    string
		spec    *Spec
		grouped bool
	}{
		{"empty", &Spec{}, true},
		{"sessions without records", &Spec{Sessions: []string{"a", "", "c"}}, true},
		{"meta only", &Spec{Meta: map[string]string{"": "", "model": "qwen3", "endpoint": "/v1/chat/completions"}}, true},
		{"one empty payload", &Spec{
			Sessions: []string{"x"},
			Records:  []Record{{Entry: Entry{Line: 1}, Payload: []byte{}}},
		}, true},
		{"single-turn in order", genSpec(1, 50, 1, 300, false), true},
		{"multi-turn grouped", genSpec(2, 20, 6, 300, false), true},
		{"multi-turn interleaved", genSpec(3, 20, 6, 300, true), false},
		{"big payloads", &Spec{
			Sessions: []string{"big"},
			Records: []Record{
				{Entry: Entry{Line: 1, Turn: 0}, Payload: big(0, 5<<20+3)},
				{Entry: Entry{Line: 2, Turn: 1}, Payload: big(1, 0)},
				{Entry: Entry{Line: 3, Turn: 2}, Payload: big(2, 3<<20)},
			},
		}, true},
		// More than 16k records spill every index column to a file.
		{"many sessions interleaved", genSpec(4, 6000, 5, 40, true), false},
		{"many single-turn sessions", genSpec(5, 20000, 1, 8, false), true},
		{"session ids with odd bytes", &Spec{
			Sessions: []string{"", "\x00\xff", "日本語", strings.Repeat("z", 1000)},
			Records: []Record{
				{Entry: Entry{Session: 3}, Payload: []byte("3")},
				{Entry: Entry{Session: 1}, Payload: []byte("1")},
				{Entry: Entry{Session: 3, Turn: 1}, Payload: []byte("3.1")},
			},
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, pf := range []bool{false, true} {
				r, path := openTemp(t, tt.spec, OpenOptions{Prefault: pf})
				checkReader(t, r, tt.spec)
				if got := r.lookup == nil; got != tt.grouped {
					t.Errorf("prefault %v: grouped layout: got %v, want %v", pf, got, tt.grouped)
				}
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := r.Size(), fi.Size(); got != want {
					t.Errorf("Size: got %d, want %d", got, want)
				}
				if got := dirNames(t, filepath.Dir(path)); !slices.Equal(got, []string{"s.aipk"}) {
					t.Errorf("directory after Commit: got %q, want only s.aipk", got)
				}
			}
		})
	}
}

func TestWriterErrors(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry // all sessions "a", "b" are registered first
		want    string  // in the error of the last Add
	}{
		{"unknown session", []Entry{{Session: 2}}, "session 2 is not registered"},
		{"huge session", []Entry{{Session: 1 << 31}}, "not registered"},
		{"first turn is not 0", []Entry{{Turn: 1}}, "want turn 0"},
		{"turn repeated", []Entry{{Turn: 0}, {Turn: 0}}, "session 0 turn 0 added, want turn 1"},
		{"turn skipped", []Entry{{Turn: 0}, {Session: 1}, {Turn: 2}}, "want turn 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.aipk")
			w, err := Create(path, WriterOptions{Meta: map[string]string{"k": "v"}})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			w.AddSession("a")
			w.AddSession("b")
			var addErr error
			for i, e := range tt.entries {
				addErr = w.Add(e, []byte("payload"))
				if i < len(tt.entries)-1 && addErr != nil {
					t.Fatalf("Add %d: %v", i, addErr)
				}
			}
			if addErr == nil || !strings.Contains(addErr.Error(), tt.want) {
				t.Fatalf("Add: got %v, want an error containing %q", addErr, tt.want)
			}
			// The error is sticky: later calls fail and nothing is written.
			if err := w.Add(Entry{Session: 1}, nil); err == nil {
				t.Errorf("Add after error: got nil, want the first error")
			}
			if err := w.Commit(); err == nil || err.Error() != addErr.Error() {
				t.Errorf("Commit: got %v, want %v", err, addErr)
			}
			w.Abort()
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("directory after failed Commit: got %q, want empty", got)
			}
		})
	}
}

func TestAbortRemovesEverything(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "s.aipk"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := genSpec(7, 10000, 3, 20, true) // enough records to spill
	for _, id := range spec.Sessions {
		w.AddSession(id)
	}
	for _, rec := range spec.Records {
		if err := w.Add(rec.Entry, rec.Payload); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := w.Len(), len(spec.Records); got != want {
		t.Errorf("Len: got %d, want %d", got, want)
	}
	// Spill files are unlinked at creation: only the temp output is visible.
	if got := dirNames(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], ".s.aipk.tmp-") {
		t.Errorf("directory while writing: got %q, want one .s.aipk.tmp-* file", got)
	}
	w.Abort()
	w.Abort()
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("directory after Abort: got %q, want empty", got)
	}
	if err := w.Commit(); err == nil {
		t.Errorf("Commit after Abort: got nil, want an error")
	}
	if err := w.Add(Entry{}, nil); err == nil {
		t.Errorf("Add after Abort: got nil, want an error")
	}
}

func TestCommitTwiceAndAbortAfterCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.aipk")
	w, err := Create(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.AddSession("a")
	if err := w.Add(Entry{}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil {
		t.Errorf("second Commit: got nil, want an error")
	}
	w.Abort()
	if got := dirNames(t, dir); !slices.Equal(got, []string{"s.aipk"}) {
		t.Errorf("directory: got %q, want only s.aipk", got)
	}
}

func TestCreateErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Create(filepath.Join(dir, "s.aipk"), WriterOptions{Meta: map[string]string{"k": strings.Repeat("v", MaxMetaSize)}})
	if err == nil || !strings.Contains(err.Error(), "metadata") {
		t.Errorf("oversized meta: got %v, want a metadata error", err)
	}
	_, err = Create(filepath.Join(dir, "missing", "s.aipk"), WriterOptions{})
	if err == nil {
		t.Errorf("missing directory: got nil, want an error")
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("directory: got %q, want empty", got)
	}
}

// TestCommitFailsCleanly makes Commit fail half way (the directory becomes
// read-only is not enough as root, so the destination becomes a directory
// after Create: the final rename is refused) and checks that no file is left
// behind.
func TestCommitFailsCleanly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.aipk")
	w, err := Create(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	spec := genSpec(8, 100, 3, 100, true)
	for _, id := range spec.Sessions {
		w.AddSession(id)
	}
	for _, rec := range spec.Records {
		if err := w.Add(rec.Entry, rec.Payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err == nil {
		t.Fatalf("Commit onto a directory: got nil, want an error")
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"s.aipk"}) {
		t.Errorf("directory after failed Commit: got %q, want only the s.aipk directory", got)
	}
}

// TestWriterHeapFlat checks that Add allocates nothing per record: the heap
// cost of a writer is its fixed buffers plus 4 bytes per session.
func TestWriterHeapFlat(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "s.aipk"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	const sessions, records = 1000, 200000
	for range sessions {
		w.AddSession("s")
	}
	payload := bytes.Repeat([]byte("p"), 100)
	next := make([]uint32, sessions)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range records {
		s := uint32(i*7919) % sessions
		if err := w.Add(Entry{Session: s, Turn: next[s]}, payload); err != nil {
			t.Fatal(err)
		}
		next[s]++
	}
	runtime.ReadMemStats(&after)
	// A handful of allocations for the spill files, none per record.
	if got := after.Mallocs - before.Mallocs; got > 200 {
		t.Errorf("allocations for %d Adds: got %d, want at most 200", records, got)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("bytes allocated for %d Adds: got %d, want at most 1 MiB", records, got)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestDeterministic(t *testing.T) {
	for _, spec := range []*Spec{genSpec(9, 300, 4, 500, true), genSpec(10, 300, 1, 500, false)} {
		a, b := image(t, spec), image(t, spec)
		if !bytes.Equal(a, b) {
			t.Errorf("two writes of one spec differ (%d and %d bytes)", len(a), len(b))
		}
	}
}

func TestSpecOfEmptyStoreIsEmpty(t *testing.T) {
	r, _ := openTemp(t, &Spec{}, OpenOptions{})
	got := ReadSpec(r)
	if got.Meta != nil || got.Sessions != nil || got.Records != nil {
		t.Errorf("ReadSpec of an empty store: got %+v, want all nil", got)
	}
	if errors.Is(r.Verify(), ErrChecksum) {
		t.Errorf("Verify of an empty store failed")
	}
}

// TestWriteErrorStopsAdd breaks the output file, or a spill file, under a
// writer and checks that Add reports it soon (not only at Commit) and that
// nothing is left behind.
func TestWriteErrorStopsAdd(t *testing.T) {
	tests := []struct {
		name  string
		brk   func(w *Writer)
		size  int // payload bytes per Add
		want  string
		limit int // Add must fail within this many records
	}{
		{"output file", func(w *Writer) { w.af.File.Close() }, 1 << 20, "file already closed", pipeNumBufs + 4},
		{"spill file", func(w *Writer) {
			f, err := os.CreateTemp(t.TempDir(), "closed")
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			w.cols[colTime].f = f
		}, 1, "index spill file", 2*spillBufSize/8 + 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := Create(filepath.Join(dir, "s.aipk"), WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			s := w.AddSession("a")
			tt.brk(w)
			payload := make([]byte, tt.size)
			var addErr error
			n := 0
			for ; n < tt.limit && addErr == nil; n++ {
				addErr = w.Add(Entry{Session: s, Turn: uint32(n)}, payload)
			}
			if addErr == nil || !strings.Contains(addErr.Error(), tt.want) {
				t.Fatalf("after %d Adds: got %v, want an error containing %q", n, addErr, tt.want)
			}
			if err := w.Commit(); err == nil {
				t.Errorf("Commit after a write error: got nil, want an error")
			}
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("directory: got %q, want empty", got)
			}
		})
	}
}

// TestHeapLookupSameBytes builds the lookup table on the heap (the path for
// systems without writable shared mappings) and checks that the file is
// byte for byte the one the mapping builds.
func TestHeapLookupSameBytes(t *testing.T) {
	spec := genSpec(19, 3000, 5, 30, true)
	want := image(t, spec)
	testHeapLookup = true
	defer func() { testHeapLookup = false }()
	if got := image(t, spec); !bytes.Equal(got, want) {
		t.Errorf("heap-built lookup: file differs from the mmap-built one (%d vs %d bytes)", len(got), len(want))
	}
}

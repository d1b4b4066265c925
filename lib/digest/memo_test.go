package digest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func skipNoMemo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the memo needs stat identities (linux)")
	}
}

// memoHasher returns a hasher with a fresh view of the memo in dir (as a new
// process would have) whose stats happen an hour after the files changed,
// far outside any timestamp granularity.
func memoHasher(dir string, events *[]Event) *Hasher {
	h := &Hasher{Memo: OpenMemo(dir), clock: func() time.Time { return time.Now().Add(time.Hour) }}
	h.OnDone = func(e Event) { *events = append(*events, e) }
	return h
}

func digestWith(t *testing.T, h *Hasher, name string) Digest {
	t.Helper()
	d, err := h.Path(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Memo.Flush(); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestMemoFile(t *testing.T) {
	skipNoMemo(t)
	memo, work := t.TempDir(), t.TempDir()
	data := randBytes(100000, 3)
	name := writeFile(t, filepath.Join(work, "f"), data)
	want := Digest{File, Sum(sha256.Sum256(data))}

	var ev []Event
	if d := digestWith(t, memoHasher(memo, &ev), name); d != want || ev[0].Memo || ev[0].Bytes != int64(len(data)) {
		t.Fatalf("cold: got %v %+v, want %v read from the file", d, ev[0], want)
	}
	ev = nil
	if d := digestWith(t, memoHasher(memo, &ev), name); d != want || !ev[0].Memo || ev[0].Bytes != 0 {
		t.Fatalf("warm: got %v %+v, want %v from the memo", d, ev[0], want)
	}

	// Same size, mtime put back: the ctime still changes, so the memo misses.
	fi, _ := os.Stat(name)
	data2 := bytes.Clone(data)
	data2[0] ^= 1
	writeFile(t, name, data2)
	must(t, os.Chtimes(name, fi.ModTime(), fi.ModTime()))
	ev = nil
	want2 := Digest{File, Sum(sha256.Sum256(data2))}
	if d := digestWith(t, memoHasher(memo, &ev), name); d != want2 || ev[0].Memo {
		t.Fatalf("after a same-size change with the old mtime: got %v %+v, want %v read", d, ev[0], want2)
	}

	// Refresh reads even when the memo knows the file.
	ev = nil
	h := memoHasher(memo, &ev)
	h.Refresh = true
	if d := digestWith(t, h, name); d != want2 || ev[0].Memo {
		t.Fatalf("refresh: got %v %+v, want %v read", d, ev[0], want2)
	}
}

// TestMemoRacy: an entry made from a stat within the timestamp granularity
// of the file's last change is neither written nor, if some writer did write
// it, trusted.
func TestMemoRacy(t *testing.T) {
	skipNoMemo(t)
	memo, work := t.TempDir(), t.TempDir()
	name := writeFile(t, filepath.Join(work, "f"), []byte("racy"))
	fi, err := os.Stat(name)
	must(t, err)
	id, _ := statID(fi)
	g := granularity(name, id)
	if g <= 0 || g > 2*time.Second {
		t.Fatalf("granularity %v", g)
	}
	changed := time.Unix(0, id.changed())
	var ev []Event
	h := memoHasher(memo, &ev)
	h.clock = func() time.Time { return changed.Add(g / 2) }
	digestWith(t, h, name)
	if _, err := os.Stat(filepath.Join(memo, MemoFile)); !os.IsNotExist(err) {
		t.Errorf("a racy entry was written (stat %v)", err)
	}

	// A memo written by someone else with a racy entry is not believed:
	// here it even holds a wrong digest, which must not come out.
	m := OpenMemo(memo)
	m.add(memoEntry{key: fileKey(id), sum: Sum{1}, written: changed.Add(g / 2).UnixNano()})
	must(t, m.Flush())
	ev = nil
	d := digestWith(t, memoHasher(memo, &ev), name)
	if d.Sum == (Sum{1}) || ev[0].Memo {
		t.Errorf("racy entry trusted: %v %+v", d, ev[0])
	}
	// The same entry made outside the granularity is believed (which shows
	// that the test above failed for the racy rule, not for the lookup).
	m = OpenMemo(memo)
	m.adds = map[string]memoEntry{fileKey(id): {key: fileKey(id), sum: Sum{2}, written: changed.Add(2 * g).UnixNano(), used: time.Now().UnixNano()}}
	must(t, os.Remove(filepath.Join(memo, MemoFile)))
	must(t, m.Flush())
	ev = nil
	if d := digestWith(t, memoHasher(memo, &ev), name); d.Sum != (Sum{2}) || !ev[0].Memo {
		t.Errorf("entry outside the granularity not used: %v %+v", d, ev)
	}
}

func TestMemoDir(t *testing.T) {
	skipNoMemo(t)
	memo, root := t.TempDir(), t.TempDir()
	trickyTree(t, root)
	want := Digest{Dir, independent(t, root)}
	var ev []Event
	if d := digestWith(t, memoHasher(memo, &ev), root); d != want || ev[0].Memo {
		t.Fatalf("cold: %v %+v, want %v", d, ev[0], want)
	}
	ev = nil
	if d := digestWith(t, memoHasher(memo, &ev), root); d != want || !ev[0].Memo {
		t.Fatalf("warm: %v %+v, want %v from the memo", d, ev[0], want)
	}
	for _, change := range []func(){
		func() { writeFile(t, filepath.Join(root, "new"), []byte("n")) },
		func() { writeFile(t, filepath.Join(root, "a", "b"), []byte("changed")) },
		func() { must(t, os.Rename(filepath.Join(root, "new"), filepath.Join(root, "renamed"))) },
		func() { must(t, os.Remove(filepath.Join(root, "renamed"))) },
	} {
		change()
		want := Digest{Dir, independent(t, root)}
		ev = nil
		if d := digestWith(t, memoHasher(memo, &ev), root); d != want || ev[0].Memo {
			t.Fatalf("after a change: %v %+v, want %v read", d, ev[0], want)
		}
	}
}

// TestMemoCorrupt: whatever the memo file holds, digests stay right, and
// the next write leaves a sound file.
func TestMemoCorrupt(t *testing.T) {
	skipNoMemo(t)
	work := t.TempDir()
	data := []byte("content")
	name := writeFile(t, filepath.Join(work, "f"), data)
	want := Digest{File, Sum(sha256.Sum256(data))}
	fi, _ := os.Stat(name)
	id, _ := statID(fi)
	good := encodeMemoLine(memoEntry{key: fileKey(id), sum: Sum{9}, written: id.changed() + int64(time.Hour), used: 1})
	flip := bytes.Clone(good)
	flip[len(flip)-20] ^= 1 // a digit of the written time
	for _, tc := range []struct{ name, content string }{
		{"garbage", "not a memo\x00\xff"},
		{"other-version", "aiperf-hash digest memo v2\n" + string(good)},
		{"bad-checksum", memoHeader + string(flip)},
		{"torn", memoHeader + string(good[:len(good)-1])},
		{"truncated-header", memoHeader[:10]},
		{"oversized", memoHeader + strings.Repeat(string(good), memoMaxBytes/len(good)+1)},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			memo := t.TempDir()
			must(t, os.WriteFile(filepath.Join(memo, MemoFile), []byte(tc.content), 0o644))
			var ev []Event
			if d := digestWith(t, memoHasher(memo, &ev), name); d != want || ev[0].Memo {
				t.Fatalf("got %v %+v, want %v read", d, ev[0], want)
			}
			b, err := os.ReadFile(filepath.Join(memo, MemoFile))
			must(t, err)
			entries := decodeMemo(b)
			if e, ok := entries[fileKey(id)]; !ok || e.sum != want.Sum {
				t.Errorf("rewritten memo lacks the entry: %q", b)
			}
		})
	}
}

// TestMemoConcurrent: writers that each learned other files, flushing at the
// same time, leave a memo with all of them (merge under the flock).
func TestMemoConcurrent(t *testing.T) {
	skipNoMemo(t)
	memo, work := t.TempDir(), t.TempDir()
	const writers, per = 8, 20
	names := make([][]string, writers)
	for w := range writers {
		for i := range per {
			names[w] = append(names[w], writeFile(t, filepath.Join(work, fmt.Sprintf("%d-%d", w, i)), []byte(fmt.Sprint(w, i))))
		}
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			var ev []Event
			h := memoHasher(memo, &ev)
			for _, n := range names[w] {
				if _, err := h.Path(context.Background(), n); err != nil {
					t.Error(err)
				}
			}
			if err := h.Memo.Flush(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	b, err := os.ReadFile(filepath.Join(memo, MemoFile))
	must(t, err)
	if got := len(decodeMemo(b)); got != writers*per {
		t.Errorf("memo holds %d entries, want %d", got, writers*per)
	}
	ents, _ := os.ReadDir(memo)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestMemoBounded: the memo keeps the most recently used entries.
func TestMemoBounded(t *testing.T) {
	memo := t.TempDir()
	m := OpenMemo(memo)
	m.adds = make(map[string]memoEntry)
	for i := range memoMaxEntries + 100 {
		k := fileKey(fileID{dev: 1, ino: uint64(i)})
		m.adds[k] = memoEntry{key: k, written: 1, used: int64(i)}
	}
	must(t, m.Flush())
	b, err := os.ReadFile(filepath.Join(memo, MemoFile))
	must(t, err)
	entries := decodeMemo(b)
	if len(entries) != memoMaxEntries || len(b) > memoMaxBytes {
		t.Fatalf("%d entries in %d bytes, want %d in at most %d", len(entries), len(b), memoMaxEntries, memoMaxBytes)
	}
	for i := range 100 {
		if _, ok := entries[fileKey(fileID{dev: 1, ino: uint64(i)})]; ok {
			t.Fatalf("least recently used entry %d kept", i)
		}
	}
}

// TestMemoDisagree: two lines for one identity with different digests mean
// a writer was wrong; neither is used.
func TestMemoDisagree(t *testing.T) {
	k := fileKey(fileID{dev: 1, ino: 2, size: 3, mtime: 4, ctime: 5})
	data := []byte(memoHeader)
	data = append(data, encodeMemoLine(memoEntry{key: k, sum: Sum{1}, written: 10, used: 10})...)
	data = append(data, encodeMemoLine(memoEntry{key: k, sum: Sum{2}, written: 10, used: 11})...)
	data = append(data, encodeMemoLine(memoEntry{key: k, sum: Sum{1}, written: 10, used: 12})...)
	if e, ok := decodeMemo(data)[k]; ok {
		t.Errorf("disagreeing entries decoded as %+v", e)
	}
}

func TestMemoLineRoundTrip(t *testing.T) {
	for _, e := range []memoEntry{
		{key: fileKey(fileID{}), written: 0, used: 0},
		{key: fileKey(fileID{dev: ^uint64(0), ino: ^uint64(0), size: 1<<63 - 1, mtime: -1 << 63, ctime: -5}), sum: Sum{0xff}, written: -1, used: 1<<63 - 1},
		{key: dirKey(Sum{1, 2, 3}), sum: Sum{4}, written: 5, used: 6},
	} {
		line := encodeMemoLine(e)
		got, ok := decodeMemoLine(line)
		if !ok || got != e {
			t.Errorf("%q: decoded %+v %v, want %+v", line, got, ok, e)
		}
	}
	for _, bad := range []string{"f 01 2 3 4 5", "f +1 2 3 4 5", "f 1 2 3 4 -0", "f 1 2 3 4", "d ABC"} {
		e := memoEntry{key: "x", written: 1, used: 1}
		line := encodeMemoLine(e)
		line = append([]byte(bad), line[1:]...)
		// Re-sign it so only the field syntax can reject it.
		body := line[:len(line)-10]
		line = fmt.Appendf(body, " %08x\n", lineCheck(body))
		if e, ok := decodeMemoLine(line); ok {
			t.Errorf("%q decoded as %+v", line, e)
		}
	}
}

// TestMemoManyLookups: past memoScanFinds lookups the memo is decoded whole;
// both ways find the same entries.
func TestMemoManyLookups(t *testing.T) {
	skipNoMemo(t)
	memo, work := t.TempDir(), t.TempDir()
	var names []string
	for i := range 3 * memoScanFinds {
		names = append(names, writeFile(t, filepath.Join(work, fmt.Sprint(i)), []byte(fmt.Sprint(i))))
	}
	var ev []Event
	h := memoHasher(memo, &ev)
	for _, n := range names {
		digestWith(t, h, n)
	}
	ev = nil
	h = memoHasher(memo, &ev)
	for _, n := range names {
		d, err := h.Path(context.Background(), n)
		must(t, err)
		data, _ := os.ReadFile(n)
		if d.Sum != Sum(sha256.Sum256(data)) {
			t.Fatalf("%s: wrong digest", n)
		}
	}
	for i, e := range ev {
		if !e.Memo {
			t.Errorf("lookup %d missed", i)
		}
	}
}

package replay

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/aiperf/toolkit/lib/store"
)

// TestSpannedBodies: a format 3 store's bodies go out as their spans
// compose them, with the Content-Length the store recorded.
func TestSpannedBodies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.aipk")
	w, err := store.Create(path, store.WriterOptions{Meta: map[string]string{store.MetaPath: "/v1/chat/completions"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	w.AddSession("a")
	big := strings.Repeat("x", 70_000) // more than a socket write at once, with luck
	for _, b := range []string{"one ", "two ", big} {
		if _, err := w.AddBlock([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	head := []byte(`{"messages":[{"role":"user","content":"`)
	tail := []byte(`"}],"model":"m","stream":false}`)
	for turn, runs := range [][]store.Run{{{Part: 1, First: 0, N: 2}}, {{Part: 1, First: 0, N: 3}}} {
		if err := w.AddSpans(store.Entry{Line: uint64(turn + 1), Turn: uint32(turn)}, [][]byte{head, nil, tail}, runs); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path, store.DefaultOpenOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var mu sync.Mutex
	var got []string
	var lens []int64
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, lens = append(got, string(b)), append(lens, r.ContentLength)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 1})
	if len(recs) != 2 || len(got) != 2 {
		t.Fatalf("%d records, %d bodies received; want 2", len(recs), len(got))
	}
	for i := range got {
		want := string(st.Payload(i))
		if got[i] != want || lens[i] != int64(st.BodyLen(i)) {
			t.Errorf("request %d: got %d bytes (Content-Length %d), want %d bytes (BodyLen %d); equal %v", i, len(got[i]), lens[i], len(want), st.BodyLen(i), got[i] == want)
		}
	}
	if !strings.Contains(got[1], "one two xxx") {
		t.Errorf("second body lacks its blocks: %.80q", got[1])
	}
}

// TestSpannedNoCopy: the parts of a format 3 body are written from the
// mapping: eight requests of 4 MiB allocate far less than their 32 MiB
// (composing each body first, as Payload does, allocates all of it).
func TestSpannedNoCopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.aipk")
	w, err := store.Create(path, store.WriterOptions{Meta: map[string]string{store.MetaPath: "/v1/chat/completions"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	const n, size = 8, 4 << 20
	for range n {
		w.AddSession("s")
	}
	if _, err := w.AddBlock([]byte(strings.Repeat("y", size))); err != nil {
		t.Fatal(err)
	}
	head, tail := []byte(`{"messages":[{"role":"user","content":"`), []byte(`"}],"model":"m","stream":false}`)
	for i := range n {
		if err := w.AddSpans(store.Entry{Line: uint64(i + 1), Session: uint32(i)}, [][]byte{head, nil, tail}, []store.Run{{Part: 1, First: 0, N: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path, store.DefaultOpenOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var mu sync.Mutex
	var bytesIn int64
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, _ := io.Copy(io.Discard, r.Body)
		mu.Lock()
		bytesIn += k
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 1})
	runtime.ReadMemStats(&after)
	if len(recs) != n || bytesIn != int64(n*st.BodyLen(0)) {
		t.Fatalf("%d records, %d bytes received; want %d and %d", len(recs), bytesIn, n, n*st.BodyLen(0))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > n*size/2 {
		t.Errorf("the replay allocated %d bytes for %d bodies of %d: composed, not written from the mapping", alloc, n, st.BodyLen(0))
	}
}

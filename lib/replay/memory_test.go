package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// heapPeak samples HeapInuse until stop is called and returns the highest
// value above the level at the start. Sampling can miss a peak, never make
// one up: a test that bounds it cannot fail spuriously.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
				peak.Store(ms.HeapInuse - base)
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// runKeep runs a replay as Run does and returns the records and the
// runner, whose free list the caller may inspect.
func runKeep(t *testing.T, o Options, n int, body func(int) []byte) ([]byte, *runner) {
	t.Helper()
	st := singleTurns(t, n, 0, body)
	var buf bytes.Buffer
	o.Results = &buf
	p, err := NewPlan(st, o)
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(p)
	if _, err := r.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), r
}

// retained is what the request states on the free list hold.
func retained(r *runner) (n int) {
	for _, rs := range r.states.free {
		n += cap(rs.buf) + cap(rs.body) + cap(rs.line) + cap(rs.coded) + cap(rs.rp.content) + cap(rs.rp.reasoning) +
			cap(rs.sse.line) + cap(rs.sse.data) + 8*cap(rs.rec.ChunkOffsetsNS) + cap(rs.start) + cap(rs.hdr)
	}
	return n
}

const mib = 1 << 20

// TestHostileServersBoundedMemory: against a server that streams text
// without end, and against huge non-streamed bodies (with and without
// Content-Length), the heap stays within a small multiple of MaxResponse
// per request in flight, each request fails with ResponseTooLargeError,
// and the states kept for later requests hold no more than their fixed
// buffers.
func TestHostileServersBoundedMemory(t *testing.T) {
	text := strings.Repeat("x", 16<<10)
	event := []byte(`data: {"choices":[{"delta":{"content":"` + text + `"}}]}` + "\n\n")
	const serverMax = 256 * mib // what each answer would send at most (so that a client without a bound ends too)
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/endless":
			w.Header().Set("Content-Type", "text/event-stream")
			for sent := 0; sent < serverMax; sent += len(event) {
				if _, err := w.Write(event); err != nil {
					return
				}
			}
		case "/length":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(300_000_000))
			io.WriteString(w, `{"choices":[{"message":{"content":"`)
			for sent := 0; sent < serverMax; sent += len(text) {
				if _, err := io.WriteString(w, text); err != nil {
					return
				}
			}
		case "/chunked":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"message":{"content":"`)
			for sent := 0; sent < 64*mib; sent += len(text) {
				if _, err := io.WriteString(w, text); err != nil {
					return
				}
			}
			io.WriteString(w, `"}}]}`)
		}
	}))
	for _, tc := range []struct {
		path  string
		limit int64
		want  string
	}{
		{"/endless", 4 * mib, "exceed the 4 MiB a response may hold"},
		{"/length", 0, "response body of 300000000 bytes or more, above the 64 MiB"},
		{"/chunked", 8 * mib, "above the 8 MiB a response may hold"},
	} {
		stop := heapPeak()
		recs, r := runKeep(t, Options{URL: url, Path: tc.path, Concurrency: 4, MaxResponse: tc.limit}, 4, func(int) []byte { return chatBody("q", 4, true) })
		peak := stop()
		for _, rec := range decodeAll(t, bytes.NewReader(recs)) {
			if rec.Err == nil || rec.Err.Type != "ResponseTooLargeError" || !strings.Contains(rec.Err.Message, tc.want) {
				t.Errorf("%s: error %+v, want a ResponseTooLargeError saying %q", tc.path, rec.Err, tc.want)
			}
		}
		// Four requests in flight, each holding at most about twice its
		// limit (a body and the text read from it), plus slack for the
		// runtime: generous, and far below what an unbounded client holds
		// (the whole 256 MiB of each answer).
		limit := uint64(tc.limit)
		if limit == 0 {
			limit = 8 * mib // the Content-Length is refused before a byte is kept
		}
		if bound := 4*3*limit + 32*mib; peak > bound {
			t.Errorf("%s: heap grew by %d MiB, want at most %d MiB", tc.path, peak/mib, bound/mib)
		}
		if n, bound := retained(r), len(r.states.free)*(readBufSize+10*keepBuf); n > bound {
			t.Errorf("%s: the free request states keep %d bytes, want at most %d", tc.path, n, bound)
		}
	}
}

// feedLimited feeds pieces from next into a stream with limit until an
// error, or until most bytes were fed; it returns the bytes fed and the
// error.
func feedLimited(limit, most int, next func(i int) []byte) (int, error) {
	rs := newReqState()
	rs.limit = limit
	rs.sse.max = min(limit, maxSSELine)
	rs.rp.reset()
	rs.mode = modeSSE
	rs.sse.reset()
	fed := 0
	for i := 0; ; i++ {
		if fed > most {
			return fed, nil
		}
		p := next(i)
		fed += len(p)
		if err := rs.onBody(bytes.Clone(p), int64(i+1)); err != nil {
			return fed, err
		}
	}
}

// TestStreamBounds: a line without end, data lines without a blank line,
// and many tiny chunks all stop at the limit.
func TestStreamBounds(t *testing.T) {
	const limit = 256 << 10
	const most = 64 * mib // a client without a bound would take it all
	tiny := []byte(`data: {"choices":[{"delta":{"content":"x"}}]}` + "\n\n")
	for _, tc := range []struct {
		name string
		next func(i int) []byte
		want string
	}{
		{"a line without end", func(i int) []byte {
			if i == 0 {
				return []byte("data: ")
			}
			return bytes.Repeat([]byte("y"), 4096)
		}, "server-sent event line longer than 256 KiB"},
		{"data lines without a blank line", func(i int) []byte { return []byte("data: " + strings.Repeat("z", 1000) + "\n") }, "server-sent event data longer than 256 KiB"},
		{"tiny chunks", func(i int) []byte { return tiny }, "chunk times"},
	} {
		fed, err := feedLimited(limit, most, tc.next)
		var big *errTooLarge
		if !errors.As(err, &big) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v after %d bytes, want a too-large error saying %q", tc.name, err, fed, tc.want)
			continue
		}
		// The tiny chunks cost 9 bytes each (a byte of text, 8 of time) for
		// 47 on the wire.
		if fed > 8*limit {
			t.Errorf("%s: stopped after %d bytes, want within %d", tc.name, fed, 8*limit)
		}
	}
}

// allocated returns the bytes f allocates (the heap's running total, so
// deterministic for code that allocates on the calling goroutine alone).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestStreamAllocations: a stream without end, fed to its limit, allocates
// at most about twice the limit on the way (its text's buffer doubles, and
// its capacity never passes the limit), where append's growth by a quarter
// allocated five times it, and held buffers past it: eight such streams at
// once reached 1 GB of RSS against --max-response's 8 x 64 MiB
// (scripts/membound/run.sh measures it). A non-streamed body of a declared
// length is read into one buffer of that length.
func TestStreamAllocations(t *testing.T) {
	const limit = 8 * mib
	event := []byte(`data: {"choices":[{"delta":{"content":"` + strings.Repeat("x", 16<<10) + `"}}]}` + "\n\n")
	rs := newReqState()
	var err error
	n := allocated(func() {
		rs.limit = limit
		rs.sse.max = min(limit, maxSSELine)
		rs.rp.reset()
		rs.mode = modeSSE
		rs.sse.reset()
		for i := 0; err == nil && i < 4*limit/len(event); i++ {
			err = rs.onBody(event, int64(i+1))
		}
	})
	var big *errTooLarge
	if !errors.As(err, &big) {
		t.Fatalf("the stream ended with %v, want a too-large error", err)
	}
	if held := cap(rs.rp.content) + cap(rs.rp.reasoning) + 8*cap(rs.rec.ChunkOffsetsNS); held > limit {
		t.Errorf("the stream's buffers hold %d bytes, above the limit %d", held, limit)
	}
	if n > 2*limit+limit/4 {
		t.Errorf("the stream allocated %d MiB on the way to its %d MiB limit, want at most %d MiB", n/mib, limit/mib, (2*limit+limit/4)/mib)
	}

	body := bytes.Repeat([]byte("y"), 4*mib)
	rs, err = newReqState(), nil
	n = allocated(func() {
		rs.limit, rs.mode, rs.declared = limit, modeJSON, int64(len(body))
		for p := body; len(p) > 0 && err == nil; p = p[min(len(p), 32<<10):] {
			err = rs.onBody(p[:min(len(p), 32<<10)], 1)
		}
	})
	if err != nil || len(rs.body) != len(body) || n > uint64(len(body))+64<<10 {
		t.Errorf("a %d MiB body of that Content-Length: %v, %d bytes allocated", len(body)/mib, err, n)
	}
}

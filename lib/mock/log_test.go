package mock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"time"
)

type logLine struct {
	ID       string  `json:"id"`
	N        uint64  `json:"n"`
	Stream   bool    `json:"stream"`
	Arrival  int64   `json:"arrival_ns"`
	Header   int64   `json:"header_ns"`
	FirstDue int64   `json:"first_due_ns"`
	First    int64   `json:"first_token_ns"`
	Last     int64   `json:"last_token_ns"`
	End      int64   `json:"end_ns"`
	Chunks   []int64 `json:"chunk_ns"`
	ChunkDue []int64 `json:"chunk_due_ns"`
}

// TestRequestLog: a streamed and a non-streamed request each get one line,
// named by the X-Request-ID they sent, with a write time for every token's
// event, in order (arrival, header, first token, ..., last token, end), and
// each chunk's due time on the schedule (the TTFT after arrival, then one
// ITL apart). No timing is asserted beyond the order and the schedule.
func TestRequestLog(t *testing.T) {
	var buf bytes.Buffer
	log := NewRequestLog(&buf)
	url, _ := start(t, Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Log: log})
	before := time.Now().UnixNano()
	resp := post(t, url, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true}`, "X-Request-ID", "req-s")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp = post(t, url, "/v1/completions", `{"prompt":"hi","max_tokens":3}`, "X-Request-ID", "req-w")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	after := time.Now().UnixNano()
	// The handler sends its line as it returns, after the client has the
	// last byte: wait for both before closing.
	deadline := time.Now().Add(10 * time.Second)
	for log.queued() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	var lines []logLine
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), buf.String())
	}
	s, w := lines[0], lines[1]
	if s.ID != "req-s" || !s.Stream || s.N != 1 || w.ID != "req-w" || w.Stream || w.N != 2 {
		t.Fatalf("ids, kinds, numbers: %+v %+v", s, w)
	}
	if len(s.Chunks) != 5 || len(s.ChunkDue) != 5 || len(w.Chunks) != 1 || len(w.ChunkDue) != 1 {
		t.Fatalf("chunks: streamed %d (due %d), whole %d (due %d), want 5 and 1", len(s.Chunks), len(s.ChunkDue), len(w.Chunks), len(w.ChunkDue))
	}
	order := append([]int64{before, s.Arrival, s.Header}, s.Chunks...)
	order = append(order, s.End, w.Arrival, w.End, after)
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			t.Fatalf("times out of order at %d: %v", i, order)
		}
	}
	if s.First != s.Chunks[0] || s.Last != s.Chunks[4] || s.FirstDue != s.ChunkDue[0] {
		t.Errorf("first/last token: %+v", s)
	}
	if d := s.ChunkDue[0] - s.Arrival; d < int64(2*time.Millisecond) || d > int64(3*time.Millisecond) {
		t.Errorf("first token due %d ns after arrival, want the TTFT (2 ms, up to the arrival's own stamp)", d)
	}
	for i := 1; i < 5; i++ {
		if d := s.ChunkDue[i] - s.ChunkDue[i-1]; d != int64(time.Millisecond) {
			t.Errorf("chunk %d due %d ns after the one before, want the ITL", i, d)
		}
	}
	if w.Header != w.First || w.First != w.Last || w.End != w.First || w.FirstDue != w.ChunkDue[0] {
		t.Errorf("a non-streamed reply is one write: %+v", w)
	}
	if d := w.FirstDue - w.Arrival; d != int64(4*time.Millisecond) { // TTFT + 2 ITL: its last token
		t.Errorf("non-streamed reply due %d ns after arrival, want 4 ms (its last token)", d)
	}
}

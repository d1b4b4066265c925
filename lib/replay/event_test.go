package replay

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// streamOutcome reads body as the 200 text/event-stream answer of one
// request, delivered in reads of n bytes, and returns its record and the
// text received.
func streamOutcome(body string, n int) (result.Record, string) {
	rs := newReqState()
	rs.rp.reset()
	rs.rec.SentNS = 1
	rs.mode = modeSSE
	rs.sse.reset()
	h := head{status: 200, sse: true, contentLength: -1}
	t := int64(1)
	var err error
	for b := []byte(body); len(b) > 0 && err == nil; {
		k := min(n, len(b))
		t++
		err = rs.onBody(append([]byte(nil), b[:k]...), t)
		b = b[k:]
	}
	if err != nil {
		rs.rec.Err = &result.Error{Type: "ResponseParseError", Message: err.Error()}
		return rs.rec, string(rs.rp.content)
	}
	rs.rec.EndNS = t
	(&runner{}).finish(rs, &h)
	return rs.rec, string(rs.rp.content)
}

// chunkA and chunkB are content chunks with the texts "a" and "b".
const (
	chunkA = `{"choices":[{"index":0,"delta":{"content":"a"}}]}`
	chunkB = `{"choices":[{"index":0,"delta":{"content":"b"}}]}`
)

// eventRules: every rule of the WHATWG event-stream parsing section ("9.2.6
// Interpreting an event stream"), each in a stream between two content
// chunks (also seeds of FuzzSSE).
var eventRules = []struct{ name, in string }{
	{"empty data value dispatches an empty event, not a chunk", "data: " + chunkA + "\n\ndata:\n\ndata: " + chunkB + "\n\n"},
	{"empty data value with a space", "data: " + chunkA + "\n\ndata: \n\ndata: " + chunkB + "\n\n"},
	{"a field-less data line (no colon) is data with an empty value", "data: " + chunkA + "\n\ndata\n\ndata: " + chunkB + "\n\n"},
	{"two empty data lines make the data one LF", "data: " + chunkA + "\n\ndata\ndata\n\ndata: " + chunkB + "\n\n"},
	{"white space only", "data: " + chunkA + "\n\ndata:   \t\n\ndata: " + chunkB + "\n\n"},
	{"a comment line", ": keep-alive\ndata: " + chunkA + "\n\n:\n\n: ping\n\ndata: " + chunkB + "\n\n"},
	{"a comment inside an event", "data: " + chunkA + "\n: between\n\ndata: " + chunkB + "\n: x\n\n"},
	{"an event line", "event: message\ndata: " + chunkA + "\n\nevent: delta\n\ndata: " + chunkB + "\n\n"},
	{"an event line alone", "data: " + chunkA + "\n\nevent: ping\n\nevent\n\ndata: " + chunkB + "\n\n"},
	{"id lines", "id: 1\ndata: " + chunkA + "\n\nid\n\nid: 2\n\ndata: " + chunkB + "\nid: 3\n\n"},
	{"retry lines", "retry: 3000\ndata: " + chunkA + "\n\nretry: x\n\nretry\n\ndata: " + chunkB + "\n\n"},
	{"a line with no colon is a field with an empty value, ignored", "data: " + chunkA + "\n\nhello world\n\nfoo\ndata: " + chunkB + "\n\n"},
	{"an unknown field", "data: " + chunkA + "\n\nfoo: {\n\nDATA: x\n\ndata: " + chunkB + "\n\n"},
	{"no space after the colon", "data:" + chunkA + "\n\ndata:" + chunkB + "\n\n"},
	{"only one leading space is dropped", "data:  " + chunkA + "\n\ndata:\t" + chunkB + "\n\n"},
	{"data split over lines (joined with LF)", "data: {\"choices\":\ndata: [{\"delta\":{\"content\":\"a\"}}]}\n\ndata: " + chunkB + "\n\n"},
	{"CRLF", "data: " + chunkA + "\r\n\r\ndata:\r\n\r\n: c\r\ndata: " + chunkB + "\r\n\r\n"},
	{"CR", "data: " + chunkA + "\r\rdata:\r\r: c\rdata: " + chunkB + "\r\r"},
	{"LF, CR and CRLF mixed", "data: " + chunkA + "\r\n\rdata:\n\r\n: c\rid: 1\r\ndata: " + chunkB + "\n\r"},
	{"a BOM at the start", "\xef\xbb\xbfdata: " + chunkA + "\n\ndata: " + chunkB + "\n\n"},
	{"a BOM at the start of a comment", "\xef\xbb\xbf: hi\n\ndata: " + chunkA + "\n\ndata: " + chunkB + "\n\n"},
	{"blank lines with no event", "\n\n\ndata: " + chunkA + "\n\n\n\n\ndata: " + chunkB + "\n\n\n"},
	{"[DONE] after the chunks", "data: " + chunkA + "\n\ndata: " + chunkB + "\n\ndata: [DONE]\n\n"},
	{"an unterminated last event is dropped", "data: " + chunkA + "\n\ndata: " + chunkB + "\n\ndata: {\"choices\":"},
}

// TestEventStreamRules: none of the lines a rule ignores, and no event
// without data, may reach the JSON parser: each of eventRules reads as two
// content chunks, the text "ab", and no error, whatever the reads' sizes.
func TestEventStreamRules(t *testing.T) {
	for _, tc := range eventRules {
		for _, n := range []int{1, 2, 7, 1 << 20} {
			rec, text := streamOutcome(tc.in, n)
			if rec.Err != nil || len(rec.ChunkOffsetsNS) != 2 || text != "ab" {
				t.Errorf("%s (reads of %d): error %v, %d chunks, text %q; want no error, 2 chunks, \"ab\"", tc.name, n, rec.Err, len(rec.ChunkOffsetsNS), text)
			}
		}
	}
	// A data event that is not JSON still fails the request.
	if rec, _ := streamOutcome("data: "+chunkA+"\n\ndata: {oops\n\n", 1<<20); rec.Err == nil || rec.Err.Type != "ResponseParseError" {
		t.Errorf("malformed chunk: error %v, want a ResponseParseError", rec.Err)
	}
}

// TestEmptyEventEndToEnd: a server that sends empty keep-alive events
// (data: with no value) between its chunks gets successful records.
func TestEmptyEventEndToEnd(t *testing.T) {
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+chunkA+"\n\ndata:\n\n: ping\n\nevent: ping\nid: 7\nretry: 10\n\ndata: "+chunkB+"\n\ndata: [DONE]\n\n")
	}))
	st := singleTurns(t, 2, 0, func(i int) []byte { return chatBody("q", 2, false) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url})
	for _, r := range recs {
		if r.Err != nil || len(r.ChunkOffsetsNS) != 2 {
			t.Errorf("error %v, %d chunks; want none and 2", r.Err, len(r.ChunkOffsetsNS))
		}
	}
}

// scriptedReader returns its pieces one a Read.
type scriptedReader struct{ pieces [][]byte }

func (r *scriptedReader) Read(p []byte) (int, error) {
	if len(r.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.pieces[0])
	if n < len(r.pieces[0]) {
		r.pieces[0] = r.pieces[0][n:]
	} else {
		r.pieces = r.pieces[1:]
	}
	return n, nil
}

// TestEventTimes pins down what an event's time is: the time of the read
// that brought its last byte (the blank line that dispatches it). Events
// that one read brings share that read's time (the client cannot know
// when each reached its socket); an event split across reads takes the
// later one; a read is timed when it returns, before any parsing.
func TestEventTimes(t *testing.T) {
	ev := func(s string) string {
		e := "data: {\"choices\":[{\"delta\":{\"content\":\"" + s + "\"}}]}\n\n"
		return fmt.Sprintf("%x\r\n%s\r\n", len(e), e)
	}
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	e2 := ev("b")
	pieces := [][]byte{
		[]byte(head + ev("a") + e2[:20]),                       // read 1: the head, event a and the start of b
		[]byte(e2[20:] + ev("c") + ev("d")),                    // read 2: the rest of b, c and d
		[]byte(ev("e")[:9]), []byte(ev("e")[9:] + "0\r\n\r\n"), // reads 3 and 4: e, split
	}
	rs := newReqState()
	rs.rp.reset()
	var clock int64
	rs.rr.init(&scriptedReader{pieces: pieces}, rs.buf, func() int64 { clock += 1000; return clock })
	h, err := rs.rr.readHead()
	if err != nil {
		t.Fatal(err)
	}
	rs.mode = modeSSE
	rs.sse.reset()
	if _, err := rs.rr.readBody(&h, rs.bodyFn); err != nil {
		t.Fatal(err)
	}
	if want := []int64{1000, 2000, 2000, 2000, 4000}; !slices.Equal(rs.rec.ChunkOffsetsNS, want) {
		t.Errorf("event times %v, want %v", rs.rec.ChunkOffsetsNS, want)
	}
	if rs.rr.firstByte != 1000 || rs.rec.FirstTokenNS != 1000 {
		t.Errorf("first byte %d, first token %d, want 1000", rs.rr.firstByte, rs.rec.FirstTokenNS)
	}
}

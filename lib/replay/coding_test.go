package replay

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// sseEvents is a stream of n content chunks ("t0", "t1", ...), a usage
// chunk and [DONE], one event a string.
func sseEvents(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d\"}}]}\n\n", i))
	}
	out = append(out, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":"+fmt.Sprint(n)+",\"total_tokens\":9}}\n\n", "data: [DONE]\n\n")
	return out
}

type flushWriter interface {
	io.Writer
	Flush() error
}

// stacked is a compressor writing into another.
type stacked struct{ outer, inner flushWriter }

func (s stacked) Write(p []byte) (int, error) { return s.outer.Write(p) }
func (s stacked) Flush() error {
	s.outer.Flush()
	return s.inner.Flush()
}
func (s stacked) Close() error {
	s.outer.(io.Closer).Close()
	return s.inner.(io.Closer).Close()
}

// TestCompressedStreams: a server that compresses its answers although the
// client asked for identity gets them decoded (gzip, x-gzip, deflate in
// the zlib format and raw, two codings stacked), events and usage alike,
// streamed or whole; the client's Accept-Encoding says identity.
func TestCompressedStreams(t *testing.T) {
	var accept atomic.Value
	for _, tc := range []struct {
		coding string
		wrap   func(io.Writer) flushWriter
	}{
		{"gzip", func(w io.Writer) flushWriter { return gzip.NewWriter(w) }},
		{"x-gzip", func(w io.Writer) flushWriter { return gzip.NewWriter(w) }},
		{"deflate", func(w io.Writer) flushWriter { return zlib.NewWriter(w) }},
		{"deflate", func(w io.Writer) flushWriter { fw, _ := flate.NewWriter(w, 5); return fw }},
		{"identity, gzip", func(w io.Writer) flushWriter { return gzip.NewWriter(w) }},
		{"gzip, deflate", func(w io.Writer) flushWriter { z := zlib.NewWriter(w); return stacked{gzip.NewWriter(z), z} }}, // gzip first, then deflate
	} {
		for _, stream := range []bool{true, false} {
			url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				accept.Store(r.Header.Get("Accept-Encoding"))
				w.Header().Set("Content-Encoding", tc.coding)
				if !stream {
					w.Header().Set("Content-Type", "application/json")
					zw := tc.wrap(w)
					io.WriteString(zw, `{"choices":[{"message":{"content":"whole"}}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`)
					zw.(io.Closer).Close()
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				zw := tc.wrap(w)
				for _, e := range sseEvents(4) {
					io.WriteString(zw, e)
					zw.Flush()
					w.(http.Flusher).Flush()
				}
				zw.(io.Closer).Close()
			}))
			st := singleTurns(t, 2, 0, func(int) []byte { return chatBody("q", 4, true) })
			recs, _ := replayAll(t, context.Background(), st, Options{URL: url})
			want := 4
			if !stream {
				want = 1
			}
			for _, r := range recs {
				if r.Err != nil || len(r.ChunkOffsetsNS) != want || r.OutputSource != result.SourceUsage || r.OutputTokens != int64(max(want, 3)) {
					t.Errorf("%s (stream %v): error %v, %d chunks, %d tokens from %q", tc.coding, stream, r.Err, len(r.ChunkOffsetsNS), r.OutputTokens, r.OutputSource)
				}
			}
			if a := accept.Load(); a != "identity" {
				t.Errorf("Accept-Encoding %q, want identity", a)
			}
		}
	}
}

// TestUndecodableStreams: a 2xx text/event-stream body that holds no
// event, or whose coding cannot be decoded, fails the request with a named
// error type instead of being a success with no tokens.
func TestUndecodableStreams(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, strings.Join(sseEvents(3), ""))
	zw.Close()
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	if bytes.Contains(random, []byte("data")) {
		t.Fatal("the random bytes hold a data field")
	}
	for _, tc := range []struct {
		name, coding string
		body         []byte
		wantType     string
		wantMsg      string
	}{
		{"gzip without Content-Encoding", "", gz.Bytes(), "EventStreamError", "no server-sent event in the"},
		{"an HTML page", "", []byte("<!DOCTYPE html>\n<html><body>\n<h1>502 Bad Gateway</h1>\n</body></html>\n"), "EventStreamError", "<!DOCTYPE html>"},
		{"random bytes", "", random, "EventStreamError", "4096-byte text/event-stream body"},
		{"a JSON error", "", []byte(`{"error":{"message":"model not loaded"}}`), "EventStreamError", "model not loaded"},
		{"comments only", "", []byte(": ping\n\n: ping\n\n"), "EventStreamError", "no server-sent event"},
		{"empty", "", nil, "EventStreamError", "empty event stream"},
		{"brotli", "br", []byte{0x1b, 0x03, 0x00}, "ContentEncodingError", "Content-Encoding br is not decoded"},
		{"gzip that is not gzip", "gzip", []byte("data: {}\n\n"), "ContentEncodingError", "cannot decode gzip data"},
		{"gzip cut short", "gzip", gz.Bytes()[:gz.Len()/2], "ContentEncodingError", "data ends before its end"},
		{"gzip with a bad checksum", "gzip", append(bytes.Clone(gz.Bytes()[:gz.Len()-8]), 1, 2, 3, 4, 5, 6, 7, 8), "ContentEncodingError", "cannot decode the data: gzip: invalid checksum"},
		{"deflate that is not deflate", "deflate", []byte{0xff, 0xff, 0xff, 0xff}, "ContentEncodingError", "cannot decode"},
	} {
		url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			if tc.coding != "" {
				w.Header().Set("Content-Encoding", tc.coding)
			}
			w.Write(tc.body)
		}))
		st := singleTurns(t, 1, 0, func(int) []byte { return chatBody("q", 4, true) })
		recs, _ := replayAll(t, context.Background(), st, Options{URL: url})
		e := recs[0].Err
		if e == nil || e.Type != tc.wantType || !strings.Contains(e.Message, tc.wantMsg) {
			t.Errorf("%s: error %+v, want %s with %q", tc.name, e, tc.wantType, tc.wantMsg)
		}
	}
}

// codedResponses are whole responses with content codings and hostile
// bodies (seeds of FuzzResponse).
func codedResponses() [][]byte {
	stream := strings.Join(sseEvents(3), "")
	var gz, zl, raw bytes.Buffer
	w := gzip.NewWriter(&gz)
	io.WriteString(w, stream)
	w.Close()
	z := zlib.NewWriter(&zl)
	io.WriteString(z, stream)
	z.Close()
	fw, _ := flate.NewWriter(&raw, 5)
	io.WriteString(fw, stream)
	fw.Close()
	resp := func(hdr string, body []byte) []byte {
		return append([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n%sContent-Length: %d\r\n\r\n", hdr, len(body))), body...)
	}
	chunked := func(hdr string, body []byte) []byte {
		b := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n" + hdr + "\r\n")
		for len(body) > 0 {
			n := min(len(body), 17)
			b = fmt.Appendf(b, "%x\r\n%s\r\n", n, body[:n])
			body = body[n:]
		}
		return append(b, "0\r\n\r\n"...)
	}
	return [][]byte{
		resp("Content-Encoding: gzip\r\n", gz.Bytes()),
		chunked("Content-Encoding: gzip\r\n", gz.Bytes()),
		resp("Content-Encoding: deflate\r\n", zl.Bytes()),
		chunked("Content-Encoding: deflate\r\n", raw.Bytes()),
		resp("Content-Encoding: identity, x-gzip\r\n", gz.Bytes()),
		resp("Content-Encoding: br\r\n", []byte{0x1b, 3, 0}),
		resp("Content-Encoding: gzip\r\n", gz.Bytes()[:gz.Len()/2]),
		resp("", gz.Bytes()),
		resp("", []byte("<html><body>502</body></html>\n")),
		resp("", []byte("data:\n\ndata: \n\n: c\nevent: x\nid: 1\nretry: 5\n\n")),
	}
}

package replay

import (
	"fmt"
	"net"
	"testing"
)

// benchStream is a response as aiperf-mock --fast and vLLM send it: chunked
// SSE, 16 content chunks, a finish chunk, a usage chunk and [DONE], each
// event in its own HTTP chunk.
func benchStream() []byte {
	var events [][]byte
	for i := range 16 {
		events = append(events, fmt.Appendf(nil, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1796111579,"model":"bench","choices":[{"index":0,"delta":{"content":" word%d"},"finish_reason":null}]}`+"\n\n", i))
	}
	events = append(events, []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1796111579,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\n"))
	events = append(events, []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1796111579,"model":"bench","choices":[],"usage":{"prompt_tokens":300,"completion_tokens":16,"total_tokens":316}}`+"\n\n"))
	events = append(events, []byte("data: [DONE]\n\n"))
	b := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\nDate: Mon, 30 Nov 2026 00:00:00 GMT\r\n\r\n")
	for _, e := range events {
		b = fmt.Appendf(b, "%x\r\n%s\r\n", len(e), e)
	}
	return append(b, "0\r\n\r\n"...)
}

// benchResponse reads one response of raw through the request path (head,
// framing, events, chunks), n bytes a read.
func benchResponse(b *testing.B, raw []byte, n int) {
	rs := newReqState()
	var clock int64
	now := func() int64 { clock++; return clock }
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		rs.rec.ChunkOffsetsNS = rs.rec.ChunkOffsetsNS[:0]
		rs.rec.FirstTokenNS, rs.rec.FirstOutputNS = 0, 0
		rs.rp.reset()
		rs.rr.init(&pieceReader{b: raw, n: n}, rs.buf, now)
		h, err := rs.rr.readHead()
		if err != nil {
			b.Fatal(err)
		}
		rs.mode = modeSSE
		rs.sse.reset()
		if _, err := rs.rr.readBody(&h, rs.bodyFn); err != nil {
			b.Fatal(err)
		}
		if len(rs.rec.ChunkOffsetsNS) != 16 || !rs.rp.done {
			b.Fatalf("%d chunks, done %v", len(rs.rec.ChunkOffsetsNS), rs.rp.done)
		}
	}
}

// BenchmarkStreamOneRead: the whole response in one read (a client that
// fell behind, or a fast server).
func BenchmarkStreamOneRead(b *testing.B) { benchResponse(b, benchStream(), 1<<20) }

// BenchmarkStreamPerEvent: about one event a read, as a client that keeps
// up with a streaming server reads.
func BenchmarkStreamPerEvent(b *testing.B) { benchResponse(b, benchStream(), 200) }

// BenchmarkQueuedReads measures what smaller reads would cost when a
// client has fallen behind a stream (the only time a read returns several
// events): the whole 16-event response waits in the socket, and is read
// with the client's 128 KiB buffer or with reads of about one event. The
// bytes are the same and all arrived before the first read, so smaller
// reads would only spread the events' times by the client's own syscall
// time (see respReader): the cost measured here buys no honesty.
func BenchmarkQueuedReads(b *testing.B) {
	raw := benchStream()
	for _, size := range []int{readBufSize, 512, 256} {
		b.Run(fmt.Sprintf("buf=%d", size), func(b *testing.B) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			cc, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Close()
			sc, err := l.Accept()
			if err != nil {
				b.Fatal(err)
			}
			defer sc.Close()
			buf := make([]byte, size)
			b.SetBytes(int64(len(raw)))
			reads := 0
			for b.Loop() {
				if _, err := sc.Write(raw); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < len(raw); {
					n, err := cc.Read(buf)
					if err != nil {
						b.Fatal(err)
					}
					got += n
					reads++
				}
			}
			b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
		})
	}
}

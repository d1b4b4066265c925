package replay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/tokenizer"
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
	defer cpuPerOp(b)()
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

// rawServer answers every request on a loopback port with the same bytes,
// as scripts/bench/replaybench serve does but without net/http: it reads
// the head and the Content-Length body and writes raw in one write. It
// allocates nothing per request, so a benchmark's allocs/op are the
// client's.
func rawServer(b *testing.B, raw []byte) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				n := 0
				for {
					end := bytes.Index(buf[:n], []byte("\r\n\r\n"))
					if end < 0 {
						m, err := c.Read(buf[n:])
						if err != nil {
							return
						}
						n += m
						continue
					}
					end += 4
					cl := 0
					if i := bytes.Index(buf[:end], []byte("Content-Length: ")); i >= 0 {
						j := i + len("Content-Length: ")
						for ; buf[j] >= '0' && buf[j] <= '9'; j++ {
							cl = cl*10 + int(buf[j]-'0')
						}
					}
					for n < end+cl {
						m, err := c.Read(buf[n:])
						if err != nil {
							return
						}
						n += m
					}
					n = copy(buf, buf[end+cl:n])
					if _, err := c.Write(raw); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

// BenchmarkRun replays single-turn streamed chats against rawServer at
// concurrency 64, records encoded to io.Discard: the whole request path
// (send, head, framing, events, chunks, record) per op. cpu-µs/op is the
// process's CPU time (the server's share included, the same in every run)
// per request: steadier than ns/op on a loaded machine.
func BenchmarkRun(b *testing.B) { benchRun(b, nil) }

// BenchmarkRunTokenizer is BenchmarkRun with the builtin tokenizer, as
// aiperf-replay runs by default: the answers carry usage, and the client
// also counts their text for usage_*_diff_pct.
func BenchmarkRunTokenizer(b *testing.B) { benchRun(b, tokenizer.Builtin) }

func benchRun(b *testing.B, tok func() (*tokenizer.Tokenizer, error)) {
	url := rawServer(b, benchStream())
	st := singleTurns(b, 1000, 0, func(i int) []byte { return chatBody(strings.Repeat("word ", 300), 16, true) })
	if tok != nil {
		if _, err := tok(); err != nil { // loaded before the clock starts
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	stats, err := Run(context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 64,
		RequestCount: int64(b.N), Results: io.Discard, Tokenizer: tok})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if stats.Errors != 0 || stats.Results != int64(b.N) {
		b.Fatalf("%d records, %d errors", stats.Results, stats.Errors)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
}

// BenchmarkCountUsage is the client's count of an answer that carried
// usage (runner.count, after the request's end time): English text of 2
// and 52 sentences (20 and 520 tokens, "tokens" the client counted), as
// content chunks accumulate it.
func BenchmarkCountUsage(b *testing.B) {
	t, err := tokenizer.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{2, 52} {
		b.Run(fmt.Sprintf("sentences=%d", n), func(b *testing.B) {
			r := &runner{}
			r.tok.load = func() (*tokenizer.Tokenizer, error) { return t, nil }
			rs := newReqState()
			text := []byte(strings.Repeat(" the quick brown fox jumps over the lazy dog.", n))
			rs.rp.content = text
			rs.rp.hasUsage = true
			rs.rp.usage = result.Usage{PromptTokens: 300, CompletionTokens: int64(11 * n), TotalTokens: 300 + int64(11*n)}
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				rs.rec = result.Record{}
				r.count(rs)
			}
			if rs.rec.OutputSource != result.SourceUsage {
				b.Fatalf("source %q", rs.rec.OutputSource)
			}
			b.ReportMetric(float64(rs.rec.ClientOutputTokens), "tokens")
		})
	}
}

// cpuPerOp returns a function that reports the process's CPU time per op
// since cpuPerOp was called ("cpu-ns/op"): on a machine shared with other
// work, steadier than ns/op, which also counts the time others held the
// CPU.
func cpuPerOp(b *testing.B) func() {
	c0 := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op") }
}

package mock

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// RequestLog writes one JSON line a completion request, the server's own
// account of when it wrote what, so that a client's timings can be checked
// against the server's truth (scripts/bench/fidelity.sh):
//
//	{"id":"<X-Request-ID>","n":7,"stream":true,"arrival_ns":…,"header_ns":…,
//	 "first_due_ns":…,"first_token_ns":…,"last_token_ns":…,"end_ns":…,
//	 "chunk_ns":[…],"chunk_due_ns":[…]}
//
// Times are wall-clock Unix nanoseconds taken as one wall-clock base plus
// monotonic offsets (as aiperf-replay's records), so that they compare with
// a client's on the same machine. arrival_ns is when the handler started
// (the request head parsed); header_ns when the response head was flushed;
// chunk_ns[i] when the event of token i was written and flushed, and
// chunk_due_ns[i] when the schedule meant it to go (TTFT, ITL, jitter), so
// chunk_ns[i] - chunk_due_ns[i] is the server's own lateness; end_ns when
// the closing events ([DONE]) were written. A non-streamed reply is one
// write: its header, first and last token and end are that write's time.
// Members not reached (a fault, a client that left) are 0 or absent.
//
// The handlers only fill an entry and hand it over; one goroutine encodes
// and writes the lines through a buffer, flushed when it has nothing queued.
type RequestLog struct {
	mu     sync.RWMutex // held to send (read) and to close (write)
	closed bool
	ch     chan *logEntry
	done   chan error
	pool   sync.Pool
	sent   atomic.Int64 // lines queued so far
}

type logEntry struct {
	id                                     []byte
	n                                      uint64
	stream                                 bool
	arrival, header, firstDue, first, last int64
	end                                    int64
	chunks, due                            []int64
}

// NewRequestLog starts the goroutine that writes the log's lines to w.
func NewRequestLog(w io.Writer) *RequestLog {
	l := &RequestLog{ch: make(chan *logEntry, 8192), done: make(chan error, 1)}
	l.pool.New = func() any { return &logEntry{chunks: make([]int64, 0, 128), due: make([]int64, 0, 128)} }
	go l.run(w)
	return l
}

// Close writes what is queued, flushes, and reports the first write error.
// Requests that end after Close are not logged.
func (l *RequestLog) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.ch)
	l.mu.Unlock()
	return <-l.done
}

func (l *RequestLog) run(w io.Writer) {
	bw := bufio.NewWriterSize(w, 256<<10)
	var werr error
	var b []byte
	for e := range l.ch {
		b = e.append(b[:0])
		l.put(e)
		if werr != nil {
			continue
		}
		if _, err := bw.Write(b); err != nil {
			werr = err
			continue
		}
		if len(l.ch) == 0 {
			werr = bw.Flush()
		}
	}
	if werr == nil {
		werr = bw.Flush()
	}
	l.done <- werr
}

// get returns an empty entry for request n (nil on a nil log).
func (l *RequestLog) get(r *http.Request, n uint64, arrived time.Time) *logEntry {
	if l == nil {
		return nil
	}
	e := l.pool.Get().(*logEntry)
	e.id = append(e.id[:0], r.Header.Get("X-Request-ID")...)
	e.n, e.arrival = n, wallNS(arrived)
	return e
}

func (l *RequestLog) put(e *logEntry) {
	*e = logEntry{id: e.id[:0], chunks: e.chunks[:0], due: e.due[:0]}
	l.pool.Put(e)
}

// send queues e's line (a nil e or log does nothing).
func (l *RequestLog) send(e *logEntry) {
	if l == nil || e == nil {
		return
	}
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		l.put(e)
		return
	}
	l.ch <- e
	l.sent.Add(1)
	l.mu.RUnlock()
}

// queued is how many lines were handed over so far.
func (l *RequestLog) queued() int64 { return l.sent.Load() }

func (e *logEntry) append(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonx.AppendString(b, string(e.id))
	b = append(b, `,"n":`...)
	b = strconv.AppendUint(b, e.n, 10)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, e.stream)
	for _, f := range []struct {
		k string
		v int64
	}{{"arrival_ns", e.arrival}, {"header_ns", e.header}, {"first_due_ns", e.firstDue}, {"first_token_ns", e.first},
		{"last_token_ns", e.last}, {"end_ns", e.end}} {
		b = append(b, `,"`...)
		b = append(b, f.k...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, f.v, 10)
	}
	b = appendInts(append(b, `,"chunk_ns":`...), e.chunks)
	b = appendInts(append(b, `,"chunk_due_ns":`...), e.due)
	return append(b, "}\n"...)
}

func appendInts(b []byte, v []int64) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, x, 10)
	}
	return append(b, ']')
}

// wallBase is the wall clock at epoch; wallNS(t) adds t's monotonic offset.
var wallBase = epoch.UnixNano()

// wallNS is t (read with a monotonic clock) as Unix nanoseconds.
func wallNS(t time.Time) int64 { return wallBase + int64(t.Sub(epoch)) }

// logChunk notes that token i's event (due at due) went out now.
func (e *logEntry) logChunk(due time.Time) {
	if e == nil {
		return
	}
	now := wallNS(time.Now())
	if len(e.chunks) == 0 {
		e.first = now
		if !due.IsZero() {
			e.firstDue = wallNS(due)
		}
	}
	e.last = now
	e.chunks = append(e.chunks, now)
	if !due.IsZero() {
		e.due = append(e.due, wallNS(due))
	}
}

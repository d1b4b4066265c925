package replay

import (
	"io"
	"sync"

	"github.com/aiperf/toolkit/lib/result"
)

// sink streams results to a writer. Requests encode their own line and
// append it to a shared buffer under a short lock; a writer goroutine
// writes full buffers, so no request ever waits on the disk unless the disk
// falls two buffers behind. Nothing about a request is kept once its line
// is in the buffer.
type sink struct {
	mu      sync.Mutex
	buf     []byte
	n       int64
	observe func(*result.Record)
	// run rides on the first result written (result.RunInfo); first is
	// that result's line.
	run   *result.RunInfo
	first []byte
	// ok counts successful results, streamed those of them whose answer
	// was server-sent events.
	ok, streamed int64

	full  chan []byte
	spare chan []byte
	done  chan struct{}
	w     io.Writer
	err   error // set by the writer goroutine; read after done
}

const sinkBuf = 256 << 10

func newSink(w io.Writer, observe func(*result.Record), run *result.RunInfo) *sink {
	s := &sink{
		buf:     make([]byte, 0, sinkBuf+4096),
		observe: observe,
		run:     run,
		full:    make(chan []byte, 1),
		spare:   make(chan []byte, 2),
		done:    make(chan struct{}),
		w:       w,
	}
	s.spare <- make([]byte, 0, sinkBuf+4096)
	go s.write()
	return s
}

func (s *sink) write() {
	defer close(s.done)
	for b := range s.full {
		if s.err == nil && s.w != nil {
			if _, err := s.w.Write(b); err != nil {
				s.err = err
			}
		}
		s.spare <- b[:0]
	}
}

// put writes line, the encoding of rec, and shows rec to the observer.
// rec and line may be reused once put returns.
func (s *sink) put(rec *result.Record, line []byte) {
	s.mu.Lock()
	if s.n == 0 && s.run != nil {
		rec.Run = s.run
		s.first = result.Append(s.first, rec)
		rec.Run = nil
		line = s.first
	}
	s.buf = append(s.buf, line...)
	s.n++
	if rec.OK() {
		s.ok++
		if rec.Streamed {
			s.streamed++
		}
	}
	if s.observe != nil {
		s.observe(rec)
	}
	if len(s.buf) >= sinkBuf {
		s.full <- s.buf
		s.buf = <-s.spare
	}
	s.mu.Unlock()
}

// close writes what is buffered, then the run's end line (end, with the
// count of lines written; none when end is nil), and waits for the writer.
func (s *sink) close(end *result.End) error {
	s.mu.Lock()
	if end != nil {
		end.Results = s.n
		s.buf = result.AppendEnd(s.buf, end)
	}
	if len(s.buf) > 0 {
		s.full <- s.buf
		s.buf = nil
	}
	close(s.full)
	s.mu.Unlock()
	<-s.done
	return s.err
}

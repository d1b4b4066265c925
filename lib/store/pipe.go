package store

import (
	"crypto/sha256"
	"hash"
	"os"
)

// pipeBufSize is the size of each buffer handed from the writing goroutine
// to the hashing goroutine. 1 MiB amortises the write(2) call and the channel
// hand-off to nothing; three buffers let the caller fill one while the
// other goroutine hashes and writes another.
const (
	pipeBufSize = 1 << 20
	pipeNumBufs = 3
)

// pipe writes a byte stream sequentially to a file and hashes it on a second
// goroutine. SHA-256 runs at about 1.5 GB/s on one core, slower than the
// rest of packing; doing it beside the caller's goroutine instead of inline
// keeps it off the critical path on a 2-core machine.
//
// Only the goroutine that owns the pipe calls its methods. The hashing
// goroutine owns h, f's file position and err while buffers are in flight;
// wait hands them back.
type pipe struct {
	f    *os.File
	h    hash.Hash
	buf  []byte      // being filled by the owner
	full chan []byte // owner → hasher
	free chan []byte // hasher → owner
	quit chan struct{}
	n    int64 // bytes accepted so far
	err  error // first write error, owned by the hasher while buffers are out
}

func newPipe(f *os.File) *pipe {
	p := &pipe{
		f:    f,
		h:    sha256.New(),
		full: make(chan []byte, pipeNumBufs),
		free: make(chan []byte, pipeNumBufs),
		quit: make(chan struct{}),
	}
	for range pipeNumBufs - 1 {
		p.free <- make([]byte, 0, pipeBufSize)
	}
	p.buf = make([]byte, 0, pipeBufSize)
	go p.run()
	return p
}

func (p *pipe) run() {
	defer close(p.quit)
	for b := range p.full {
		p.h.Write(b)
		if p.err == nil {
			_, p.err = p.f.Write(b)
		}
		p.free <- b[:0]
	}
}

// Write appends b to the stream. Write errors surface from wait.
func (p *pipe) Write(b []byte) {
	p.n += int64(len(b))
	for len(b) > 0 {
		k := copy(p.buf[len(p.buf):cap(p.buf)], b)
		p.buf = p.buf[:len(p.buf)+k]
		b = b[k:]
		if len(p.buf) == cap(p.buf) {
			p.full <- p.buf
			p.buf = <-p.free
		}
	}
}

// put32 appends v, little-endian.
func (p *pipe) put32(v uint32) {
	if cap(p.buf)-len(p.buf) >= 4 {
		p.buf = le.AppendUint32(p.buf, v)
		p.n += 4
		return
	}
	var b [4]byte
	le.PutUint32(b[:], v)
	p.Write(b[:])
}

// put64 appends v, little-endian.
func (p *pipe) put64(v uint64) {
	if cap(p.buf)-len(p.buf) >= 8 {
		p.buf = le.AppendUint64(p.buf, v)
		p.n += 8
		return
	}
	var b [8]byte
	le.PutUint64(b[:], v)
	p.Write(b[:])
}

// zeros appends n zero bytes.
func (p *pipe) zeros(n int) {
	var z [8]byte
	for n > 0 {
		k := min(n, len(z))
		p.Write(z[:k])
		n -= k
	}
}

// wait hands the current buffer over and waits until everything accepted so
// far is hashed and written. Afterwards the owner may use h and f directly
// until the next Write.
func (p *pipe) wait() error {
	if len(p.buf) > 0 {
		p.full <- p.buf
		p.buf = <-p.free
	}
	// Taking every buffer back means the hasher holds none: it is idle.
	var held [pipeNumBufs - 1][]byte
	for i := range held {
		held[i] = <-p.free
	}
	for _, b := range held {
		p.free <- b
	}
	return p.err
}

// close stops the hashing goroutine. It is idempotent.
func (p *pipe) close() {
	if p.full == nil {
		return
	}
	close(p.full)
	<-p.quit
	p.full = nil
}

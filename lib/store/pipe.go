package store

import (
	"crypto/sha256"
	"hash"
	"os"
	"sync"
	"sync/atomic"
)

// pipeBufSize is the size of each buffer handed from the caller's goroutine
// to the hashing and writing goroutines: 1 MiB amortises the write(2) call
// and the hand-off to nothing. With four buffers the caller fills one while
// the others are being hashed and written.
const (
	pipeBufSize = 1 << 20
	pipeNumBufs = 4
)

// pipe writes a byte stream sequentially to a file and hashes it, on two
// goroutines of its own. SHA-256 runs at about 1.5 GB/s on one core of the
// 2-core development machine (SHA-NI), slower than the rest of packing:
// hashing inline would nearly double the time to pack, and hashing and
// writing one after the other on a single goroutine caps the writer at
// about 1 GB/s. Each
// buffer goes to both goroutines at once and comes back when both are done.
//
// Only the goroutine that owns the pipe calls its methods. The hashing
// goroutine owns h, the writing goroutine owns f's file position and err,
// while buffers are in flight; wait hands them back.
type pipe struct {
	f      *os.File
	h      hash.Hash
	buf    *pipeBuf      // being filled by the owner
	hashq  chan *pipeBuf // owner → hasher
	writeq chan *pipeBuf // owner → writer
	free   chan *pipeBuf // back to the owner when hashed and written
	quit   sync.WaitGroup
	n      int64       // bytes accepted so far
	err    error       // first write error, owned by the writer while buffers are out
	failed atomic.Bool // err is set: the owner may look without waiting
	closed bool
}

type pipeBuf struct {
	b    []byte
	refs atomic.Int32
}

func newPipe(f *os.File) *pipe {
	p := &pipe{
		f:      f,
		h:      sha256.New(),
		hashq:  make(chan *pipeBuf, pipeNumBufs),
		writeq: make(chan *pipeBuf, pipeNumBufs),
		free:   make(chan *pipeBuf, pipeNumBufs),
	}
	for range pipeNumBufs - 1 {
		p.free <- &pipeBuf{b: make([]byte, 0, pipeBufSize)}
	}
	p.buf = &pipeBuf{b: make([]byte, 0, pipeBufSize)}
	p.quit.Go(func() {
		for pb := range p.hashq {
			p.h.Write(pb.b)
			p.done(pb)
		}
	})
	p.quit.Go(func() {
		for pb := range p.writeq {
			if p.err == nil {
				if _, p.err = p.f.Write(pb.b); p.err != nil {
					p.failed.Store(true)
				}
			}
			p.done(pb)
		}
	})
	return p
}

// done is called by each of the two goroutines when it has finished with pb.
func (p *pipe) done(pb *pipeBuf) {
	if pb.refs.Add(-1) == 0 {
		pb.b = pb.b[:0]
		p.free <- pb
	}
}

// send hands the current buffer over and takes a free one.
func (p *pipe) send() {
	p.buf.refs.Store(2)
	p.hashq <- p.buf
	p.writeq <- p.buf
	p.buf = <-p.free
}

// Write appends b to the stream. Write errors surface from wait.
func (p *pipe) Write(b []byte) {
	p.n += int64(len(b))
	for len(b) > 0 {
		buf := p.buf.b
		k := copy(buf[len(buf):cap(buf)], b)
		p.buf.b = buf[:len(buf)+k]
		b = b[k:]
		if len(p.buf.b) == cap(p.buf.b) {
			p.send()
		}
	}
}

// put32 appends v, little-endian.
func (p *pipe) put32(v uint32) {
	if cap(p.buf.b)-len(p.buf.b) >= 4 {
		p.buf.b = le.AppendUint32(p.buf.b, v)
		p.n += 4
		return
	}
	var b [4]byte
	le.PutUint32(b[:], v)
	p.Write(b[:])
}

// put64 appends v, little-endian.
func (p *pipe) put64(v uint64) {
	if cap(p.buf.b)-len(p.buf.b) >= 8 {
		p.buf.b = le.AppendUint64(p.buf.b, v)
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
	if len(p.buf.b) > 0 {
		p.send()
	}
	// Taking every other buffer back means neither goroutine holds one.
	var held [pipeNumBufs - 1]*pipeBuf
	for i := range held {
		held[i] = <-p.free
	}
	for _, pb := range held {
		p.free <- pb
	}
	return p.err
}

// close stops both goroutines. It is idempotent.
func (p *pipe) close() {
	if p.closed {
		return
	}
	p.closed = true
	close(p.hashq)
	close(p.writeq)
	p.quit.Wait()
}

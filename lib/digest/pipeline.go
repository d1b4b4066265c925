package digest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	sha256 "github.com/minio/sha256-simd"
)

// A single SHA-256 stream cannot be split across cores: each 64-byte block
// depends on the state left by the one before. What a second core can take
// is everything else: open, read (the copy out of the page cache, or the wait
// for the disk), fstat and close. So one goroutine reads the sources in
// order into a small ring of large buffers while the calling goroutine
// hashes them; on a page-cached file reading is about a tenth of the work
// (about 10 GB/s for read(), 1.5 GB/s for SHA-256 with SHA-NI), so the
// overlap saves at most that tenth, and more when the disk is the bottleneck.

// source is one input of a pipeline.
type source struct {
	name     string    // the relative path hashed before the bytes in a directory digest
	disp     string    // the path as the user reaches it, for messages
	open     string    // the path to open, or "" when r is set
	nofollow bool      // refuse a symlink at open (the walker already resolved it)
	r        io.Reader // a stream
	id       fileID    // the identity the caller saw at its stat (idOK)
	idOK     bool
	size     int64 // the expected size (for the small-input fast path), or -1
}

type pipeline struct {
	chunk, bufs int
	stable      bool  // no file changed identity between the caller's stat and the end of its read
	bytes       int64 // bytes read
}

type chunk struct {
	b           []byte
	src         int
	first, last bool
}

var nul = []byte{0}

// bufPool recycles buffers of DefaultChunkSize; other sizes (benchmarks) are
// allocated.
var bufPool = sync.Pool{New: func() any { b := make([]byte, DefaultChunkSize); return &b }}

func (p *pipeline) getBuf() []byte {
	if p.chunk == DefaultChunkSize {
		return *bufPool.Get().(*[]byte)
	}
	return make([]byte, p.chunk)
}

func (p *pipeline) putBuf(b []byte) {
	if cap(b) == DefaultChunkSize {
		b = b[:DefaultChunkSize]
		bufPool.Put(&b)
	}
}

// run hashes the sources in order. With dir set, each contributes
// name, NUL, bytes, NUL (the directory rule); else their bytes are hashed
// back to back (run is only called with one source then).
func (p *pipeline) run(ctx context.Context, srcs []source, dir bool) (Sum, error) {
	p.stable = true
	h := sha256.New()
	hash := func(c chunk) {
		if dir && c.first {
			io.WriteString(h, srcs[c.src].name)
			h.Write(nul)
		}
		h.Write(c.b)
		if dir && c.last {
			h.Write(nul)
		}
	}
	var err error
	if small(srcs, p.chunk) {
		err = p.runInline(ctx, srcs, hash)
	} else {
		err = p.runAsync(ctx, srcs, hash)
	}
	if err != nil {
		return Sum{}, err
	}
	var s Sum
	h.Sum(s[:0])
	return s, nil
}

// small reports whether all sources together fit one chunk, where handing
// chunks to another goroutine costs more than it saves.
func small(srcs []source, chunk int) bool {
	var total int64
	for _, s := range srcs {
		if s.size < 0 || s.r != nil {
			return false
		}
		total += s.size
	}
	return total < int64(chunk)
}

func (p *pipeline) runInline(ctx context.Context, srcs []source, hash func(chunk)) error {
	b := p.getBuf()
	defer p.putBuf(b)
	return p.feed(ctx, srcs, func() []byte { return b }, func(c chunk) bool { hash(c); return true })
}

func (p *pipeline) runAsync(ctx context.Context, srcs []source, hash func(chunk)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	free := make(chan []byte, p.bufs)
	out := make(chan chunk, p.bufs)
	errc := make(chan error, 1)
	allocated := 0
	get := func() []byte {
		select {
		case b := <-free:
			return b
		default:
		}
		if allocated < p.bufs {
			allocated++
			return p.getBuf()
		}
		select {
		case b := <-free:
			return b
		case <-ctx.Done():
			return nil
		}
	}
	emit := func(c chunk) bool {
		select {
		case out <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		errc <- p.feed(ctx, srcs, get, emit)
		close(out)
	}()
	for c := range out {
		hash(c)
		free <- c.b[:cap(c.b)]
	}
	err := <-errc
	close(free)
	for b := range free {
		p.putBuf(b)
	}
	return err
}

// feed reads every source in order and emits its bytes as chunks: the first
// chunk of a source has first set, its last one (possibly empty) last set.
// It stops at the first error, or when get or emit report that ctx is done.
func (p *pipeline) feed(ctx context.Context, srcs []source, get func() []byte, emit func(chunk) bool) error {
	for i := range srcs {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := &srcs[i]
		r, done, err := p.openSource(s)
		if err != nil {
			return err
		}
		first := true
		for {
			b := get()
			if b == nil {
				done(false)
				return ctx.Err()
			}
			n, err := io.ReadFull(r, b)
			p.bytes += int64(n)
			last := err == io.EOF || err == io.ErrUnexpectedEOF
			if err != nil && !last {
				done(false)
				return readError(s, err)
			}
			if !emit(chunk{b: b[:n], src: i, first: first, last: last}) {
				done(false)
				return ctx.Err()
			}
			first = false
			if last {
				break
			}
		}
		if err := done(true); err != nil {
			return err
		}
	}
	return nil
}

// openSource opens s and returns its reader and a function that closes it;
// done(true) also checks that the file kept the identity the caller saw
// (else the pipeline is not stable and the memo must not learn the digest).
func (p *pipeline) openSource(s *source) (io.Reader, func(bool) error, error) {
	if s.r != nil {
		return s.r, func(bool) error { return nil }, nil
	}
	f, err := openFile(s.open, s.nofollow)
	if err != nil {
		if errors.Is(err, errSymlinkAtOpen) {
			// The walker resolved this path, so a symlink here means the
			// tree changed under us: report it rather than follow it.
			return nil, nil, &fs.PathError{Op: "open", Path: s.disp, Err: errors.New("replaced by a symlink while digesting")}
		}
		return nil, nil, &fs.PathError{Op: "open", Path: s.disp, Err: unwrapPath(err)}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "digest", Path: s.disp, Err: special(fi.Mode())}
	}
	if s.idOK {
		if id, ok := statID(fi); !ok || id != s.id {
			p.stable = false
		}
	}
	adviseSequential(f)
	done := func(ok bool) error {
		if ok && s.idOK {
			if fi, err := f.Stat(); err != nil {
				p.stable = false
			} else if id, ok := statID(fi); !ok || id != s.id {
				p.stable = false
			}
		}
		if err := f.Close(); err != nil && ok {
			return err
		}
		return nil
	}
	return f, done, nil
}

func readError(s *source, err error) error {
	return &fs.PathError{Op: "read", Path: s.disp, Err: unwrapPath(err)}
}

var errSymlinkAtOpen = errors.New("is a symlink")

// openFile opens name read-only without blocking on a FIFO that replaced a
// regular file since its stat (the caller then checks the type with fstat).
func openFile(name string, nofollow bool) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|oNonblock|noFollowFlag(nofollow), 0)
	if err != nil && nofollow && isSymlinkErr(err) {
		return nil, fmt.Errorf("%s: %w", name, errSymlinkAtOpen)
	}
	return f, err
}

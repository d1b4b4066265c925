package store

import (
	"io"
	"os"
	"path/filepath"
)

// spillBufSize is how much of a column stays in memory before it moves to a
// temporary file. Ten columns of 64 KiB keep a writer under 1 MiB of heap for
// any record count, and a store of up to 8k records (every test and fuzz
// input) never touches a temporary file for its index.
const spillBufSize = 64 << 10

// spill is an append-only byte column: the first spillBufSize bytes in
// memory, the rest in a temporary file next to the output. The file is
// unlinked as soon as it is created (where the OS allows it), so it cannot
// outlive the process whatever happens to the writer.
type spill struct {
	path string // output path; the temp file goes beside it
	buf  []byte
	f    *os.File
	name string // set when the file could not be unlinked at creation
	n    int64  // total bytes appended
	err  error  // first error; later appends are dropped
	fail *bool  // set on the first error, shared by a writer's spills
}

func newSpill(path string, fail *bool) *spill {
	return &spill{path: path, buf: make([]byte, 0, spillBufSize), fail: fail}
}

func (s *spill) put32(v uint32) {
	if len(s.buf)+4 > cap(s.buf) {
		s.flush()
	}
	s.buf = le.AppendUint32(s.buf, v)
	s.n += 4
}

func (s *spill) put64(v uint64) {
	if len(s.buf)+8 > cap(s.buf) {
		s.flush()
	}
	s.buf = le.AppendUint64(s.buf, v)
	s.n += 8
}

func (s *spill) write(b []byte) {
	s.n += int64(len(b))
	for len(b) > 0 {
		if len(s.buf) == cap(s.buf) {
			s.flush()
		}
		k := copy(s.buf[len(s.buf):cap(s.buf)], b)
		s.buf = s.buf[:len(s.buf)+k]
		b = b[k:]
	}
}

// flush moves the buffer to the file. The buffer always holds a whole number
// of 4- and 8-byte values when it is flushed because its capacity is a
// multiple of 8 and values never straddle a flush.
func (s *spill) flush() {
	if s.err == nil && s.f == nil {
		s.f, s.err = os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".spill-*")
		if s.err == nil && os.Remove(s.f.Name()) != nil {
			s.name = s.f.Name() // Windows: removed by close
		}
	}
	if s.err == nil {
		_, s.err = s.f.Write(s.buf)
	}
	if s.err != nil {
		*s.fail = true
	}
	s.buf = s.buf[:0]
}

// each calls fn with consecutive chunks of the column, using scratch to read
// the spilled part. Chunk lengths are multiples of 8 except the last.
func (s *spill) each(scratch []byte, fn func([]byte)) error {
	if s.err != nil {
		return s.err
	}
	if s.f != nil {
		var off int64
		for {
			k, err := s.f.ReadAt(scratch, off)
			if k > 0 {
				fn(scratch[:k])
				off += int64(k)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
		}
	}
	if len(s.buf) > 0 {
		fn(s.buf)
	}
	return nil
}

// close releases the temporary file. It is idempotent.
func (s *spill) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	if s.name != "" {
		os.Remove(s.name)
		s.name = ""
	}
}

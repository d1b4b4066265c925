package trace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineBufSize is the bufio buffer; longer lines are assembled in
// lineReader.long, so there is no limit on line length (Mooncake payload
// rows and raw_payload bodies with images easily exceed 64 MiB).
const lineBufSize = 64 << 10

// lineReader splits a stream into lines ending in "\n" or "\r\n" and counts
// them from 1.
type lineReader struct {
	br   *bufio.Reader
	long []byte // holds a line longer than the bufio buffer
	n    int64  // number of the last line returned
	eof  bool
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, lineBufSize)}
}

// next returns the next line without its terminator and its 1-based number.
// The slice is valid until the following call. At the end it returns io.EOF;
// a last line without a terminator is still returned.
func (l *lineReader) next() ([]byte, int64, error) {
	if l.eof {
		return nil, l.n, io.EOF
	}
	frag, err := l.br.ReadSlice('\n')
	line := frag
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], frag...)
		for errors.Is(err, bufio.ErrBufferFull) {
			frag, err = l.br.ReadSlice('\n')
			l.long = append(l.long, frag...)
		}
		line = l.long
		if cap(l.long) > 64*lineBufSize && len(l.long) < cap(l.long)/4 {
			l.long = nil // do not pin a huge buffer after a shorter long line
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		l.eof = true
		if len(line) == 0 {
			return nil, l.n, io.EOF
		}
	default:
		return nil, l.n + 1, err
	}
	l.n++
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, l.n, nil
}

// record returns the next non-blank line, trimmed of surrounding white
// space, with its line number. Blank lines are skipped but counted.
func (l *lineReader) record() ([]byte, int64, error) {
	for {
		line, n, err := l.next()
		if err != nil {
			return nil, n, err
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			return t, n, nil
		}
	}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// bomSkipper drops a UTF-8 byte order mark at the start of a stream.
type bomSkipper struct {
	r    *bufio.Reader
	done bool
}

func skipBOM(r io.Reader) io.Reader {
	return &bomSkipper{r: bufio.NewReaderSize(r, 4096)}
}

func (s *bomSkipper) Read(p []byte) (int, error) {
	if !s.done {
		s.done = true
		if b, err := s.r.Peek(3); err == nil && bytes.Equal(b, utf8BOM) {
			_, _ = s.r.Discard(3)
		}
	}
	return s.r.Read(p)
}

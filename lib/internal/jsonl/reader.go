package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineBufSize is the bufio buffer; longer lines are assembled in
// Reader.long, up to the reader's limit.
const lineBufSize = 64 << 10

// Reader splits a stream into lines ending in "\n" or "\r\n", counts
// them from 1 and refuses lines longer than max bytes. A UTF-8 byte order
// mark at the start of the stream is dropped.
type Reader struct {
	br      *bufio.Reader
	max     int
	bufSize int
	long    []byte // holds a line longer than the bufio buffer
	n       int64  // number of the last line returned
	eof     bool
	started bool // the BOM check is done

	// The last line: where it lives, for Take, and what Record returned,
	// for Unread and Rest.
	inLong  int8 // 0: in br's buffer; 1: in long; 2: long was given away by Take
	lineLen int
	rec     []byte // the last record, trimmed
	raw     []byte // the same line untrimmed, without its terminator
	term    bool   // the line ended with "\n"
	again   bool   // Record returns rec again
}

// NewReader reads lines of at most max bytes (DefaultMaxLine when max <= 0)
// from r through a buffer of 64 KiB.
func NewReader(r io.Reader, max int) *Reader { return NewReaderSize(r, lineBufSize, max) }

// NewReaderSize is NewReader with a read buffer of size bytes: lines that
// fit it are returned without a copy.
func NewReaderSize(r io.Reader, size, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &Reader{br: bufio.NewReaderSize(r, size), max: max, bufSize: size}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func (l *Reader) start() {
	if !l.started {
		l.started = true
		if b, err := l.br.Peek(3); err == nil && bytes.Equal(b, utf8BOM) {
			_, _ = l.br.Discard(3)
		}
	}
}

// Next returns the next line without its terminator and its 1-based number.
// The slice is valid until the following call. At the end it returns io.EOF;
// a last line without a terminator is still returned.
func (l *Reader) Next() ([]byte, int64, error) {
	l.start()
	if l.eof {
		return nil, l.n, io.EOF
	}
	l.inLong = 0
	frag, err := l.br.ReadSlice('\n')
	line := frag
	if errors.Is(err, bufio.ErrBufferFull) {
		if line, err = l.assemble(frag); line == nil && err != nil {
			return nil, l.n + 1, err
		}
		l.inLong = 1
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
	l.term = len(line) > 0 && line[len(line)-1] == '\n'
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) > l.max {
		return nil, l.n, &LineTooLongError{Max: l.max}
	}
	l.lineLen = len(line)
	return line, l.n, nil
}

// chunkSize is the piece in which assemble collects a long line.
const chunkSize = 1 << 20

// assemble reads the rest of a line longer than the bufio buffer, whose
// first fragment is frag, into l.long. The line fills what l.long holds
// and then pieces of chunkSize, which are copied once into a buffer of the
// exact size at the end: a line of L bytes needs at most 2L of memory while
// it is read (appending to one buffer needed up to 3L and left a trail of
// garbage), and L once read. It returns the read error that ended the line
// (nil, io.EOF or another), and a nil line with a *LineTooLongError.
func (l *Reader) assemble(frag []byte) ([]byte, error) {
	buf := append(l.long[:0], frag...)
	var chunks [][]byte
	total := len(buf)
	var err error = bufio.ErrBufferFull
	for errors.Is(err, bufio.ErrBufferFull) {
		if total > l.max+2 { // +2: the terminator is not part of the line
			l.long = nil
			return nil, &LineTooLongError{Max: l.max}
		}
		frag, err = l.br.ReadSlice('\n')
		total += len(frag)
		for len(frag) > 0 {
			if len(chunks) == 0 && len(buf) < cap(buf) {
				n := min(len(frag), cap(buf)-len(buf))
				buf, frag = append(buf, frag[:n]...), frag[n:]
				continue
			}
			if len(chunks) == 0 || len(chunks[len(chunks)-1]) == chunkSize {
				chunks = append(chunks, make([]byte, 0, chunkSize))
			}
			c := &chunks[len(chunks)-1]
			n := min(len(frag), chunkSize-len(*c))
			*c, frag = append(*c, frag[:n]...), frag[n:]
		}
	}
	if len(chunks) > 0 {
		line := make([]byte, total)
		n := copy(line, buf)
		for _, c := range chunks {
			n += copy(line[n:], c)
		}
		buf = line
	}
	l.long = buf
	if cap(buf) > 64*l.bufSize && len(buf) < cap(buf)/4 {
		l.long = nil // do not pin a huge buffer after a shorter long line
	}
	return buf, err
}

// Record returns the next non-blank line, trimmed of surrounding white
// space, with its line number. Blank lines are skipped but counted.
func (l *Reader) Record() ([]byte, int64, error) {
	if l.again {
		l.again = false
		return l.rec, l.n, nil
	}
	for {
		line, n, err := l.Next()
		if err != nil {
			return nil, n, err
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			l.rec, l.raw = t, line
			return t, n, nil
		}
	}
}

// Unread makes the next call to Record return the last record again.
func (l *Reader) Unread() { l.again = true }

// Take returns v, a part of the last line, as a value the caller owns. A
// line in the bufio buffer is copied; the buffer of a long line is handed
// over instead when v is most of it (the reader assembles the next long
// line in a new one), so a huge payload is not copied.
func (l *Reader) Take(v []byte) []byte {
	if l.inLong == 0 || 2*len(v) < l.lineLen {
		return append([]byte(nil), v...)
	}
	l.inLong, l.long = 2, nil
	return v[:len(v):len(v)]
}

// Rest returns the input from the start of the last record (when Record was
// called once and Unread) or from where the reader is, for the decoders that
// read bytes rather than lines. Blank lines before the record are replayed
// as empty lines, so line numbers stay right.
func (l *Reader) Rest() io.Reader {
	l.start()
	if !l.again {
		return l.br
	}
	l.again = false
	head := bytes.Repeat([]byte{'\n'}, int(l.n-1))
	head = append(head, l.raw...)
	if l.term {
		head = append(head, '\n')
	}
	return io.MultiReader(bytes.NewReader(head), l.br)
}

// LimitLines passes r through, failing with a *LineTooLongError inside an
// *Error naming name and the line once a line is longer than max bytes.
type LimitLines struct {
	r    io.Reader
	name string
	max  int
	cur  int   // bytes of the current line so far
	line int64 // current line, from 1
}

// NewLimitLines limits the lines of r, named name in errors, to max bytes
// (DefaultMaxLine when max <= 0), for decoders that read bytes, not lines.
func NewLimitLines(r io.Reader, name string, max int) *LimitLines {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &LimitLines{r: r, name: name, max: max, line: 1}
}

func (l *LimitLines) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.cur += len(b)
			break
		}
		if l.cur+i > l.max+1 { // +1: a "\r" before the "\n"
			return 0, &Error{File: l.name, Line: l.line, Err: &LineTooLongError{Max: l.max}}
		}
		l.cur = 0
		l.line++
		b = b[i+1:]
	}
	if l.cur > l.max+1 {
		return 0, &Error{File: l.name, Line: l.line, Err: &LineTooLongError{Max: l.max}}
	}
	return n, err
}

// Line returns the number of the last line read (0 before the first).
func (l *Reader) Line() int64 { return l.n }

// Unterminated reports that the line returned last did not end with "\n":
// the input's last line, cut there (a writer killed mid-line) or written
// without one.
func (l *Reader) Unterminated() bool { return !l.term }

// AfterEnd reads what follows a format's end line: nil when it is only
// blank lines, an *Error naming file and the first other line and wrapping
// ErrAfterEnd (or a *LineTooLongError), or the read error that stopped it.
func (l *Reader) AfterEnd(file string) error {
	_, n, err := l.Record()
	var tl *LineTooLongError
	switch {
	case err == nil:
		return &Error{File: file, Line: n, Err: ErrAfterEnd}
	case err == io.EOF:
		return nil
	case errors.As(err, &tl):
		return &Error{File: file, Line: n, Err: err}
	}
	return err
}

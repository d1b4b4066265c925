package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineBytes is the longest trace line read when
// [Options.MaxLineBytes] is 0: generous (payload rows and raw bodies with
// base64 images reach tens of MiB), and a bound on what one line can make
// a reader hold.
const DefaultMaxLineBytes = 256 << 20

// LineTooLongError is the error (inside an [*Error] with the line number)
// for a line longer than [Options.MaxLineBytes].
type LineTooLongError struct{ Max int }

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("the line is longer than %d bytes", e.Max)
}

// lineBufSize is the bufio buffer; longer lines are assembled in
// lineReader.long, up to the reader's limit.
const lineBufSize = 64 << 10

// lineReader splits a stream into lines ending in "\n" or "\r\n", counts
// them from 1 and refuses lines longer than max bytes. A UTF-8 byte order
// mark at the start of the stream is dropped.
type lineReader struct {
	br      *bufio.Reader
	max     int
	long    []byte // holds a line longer than the bufio buffer
	n       int64  // number of the last line returned
	eof     bool
	started bool // the BOM check is done

	// The last line: where it lives, for take, and what record returned,
	// for unread and replay.
	inLong  int8 // 0: in br's buffer; 1: in long; 2: long was given away by take
	lineLen int
	rec     []byte // the last record, trimmed
	raw     []byte // the same line untrimmed, without its terminator
	term    bool   // the line ended with "\n"
	again   bool   // record returns rec again
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &lineReader{br: bufio.NewReaderSize(r, lineBufSize), max: max}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func (l *lineReader) start() {
	if !l.started {
		l.started = true
		if b, err := l.br.Peek(3); err == nil && bytes.Equal(b, utf8BOM) {
			_, _ = l.br.Discard(3)
		}
	}
}

// next returns the next line without its terminator and its 1-based number.
// The slice is valid until the following call. At the end it returns io.EOF;
// a last line without a terminator is still returned.
func (l *lineReader) next() ([]byte, int64, error) {
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
func (l *lineReader) assemble(frag []byte) ([]byte, error) {
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
	if cap(buf) > 64*lineBufSize && len(buf) < cap(buf)/4 {
		l.long = nil // do not pin a huge buffer after a shorter long line
	}
	return buf, err
}

// record returns the next non-blank line, trimmed of surrounding white
// space, with its line number. Blank lines are skipped but counted.
func (l *lineReader) record() ([]byte, int64, error) {
	if l.again {
		l.again = false
		return l.rec, l.n, nil
	}
	for {
		line, n, err := l.next()
		if err != nil {
			return nil, n, err
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			l.rec, l.raw = t, line
			return t, n, nil
		}
	}
}

// unread makes the next call to record return the last record again.
func (l *lineReader) unread() { l.again = true }

// take returns v, a part of the last line, as a value the caller owns. A
// line in the bufio buffer is copied; the buffer of a long line is handed
// over instead when v is most of it (the reader assembles the next long
// line in a new one), so a huge payload is not copied.
func (l *lineReader) take(v []byte) json.RawMessage {
	if l.inLong == 0 || 2*len(v) < l.lineLen {
		return copyRaw(v)
	}
	l.inLong, l.long = 2, nil
	return v[:len(v):len(v)]
}

// rest returns the input from the start of the last record (when record was
// called once and unread) or from where the reader is, for the decoders that
// read bytes rather than lines. Blank lines before the record are replayed
// as empty lines, so line numbers stay right.
func (l *lineReader) rest() io.Reader {
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

// limitLines passes r through, failing with a *LineTooLongError inside an
// *Error naming name and the line once a line is longer than max bytes.
type limitLines struct {
	r    io.Reader
	name string
	max  int
	cur  int   // bytes of the current line so far
	line int64 // current line, from 1
}

func newLimitLines(r io.Reader, name string, max int) *limitLines {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &limitLines{r: r, name: name, max: max, line: 1}
}

func (l *limitLines) Read(p []byte) (int, error) {
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

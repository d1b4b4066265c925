package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Options select the format and the filters that aiperf's trace loaders
// apply (base_trace_loader: fixed-schedule offsets, synthesis max ISL/OSL).
//
// The filters apply to the trace formats only (mooncake_trace,
// bailian_trace, burst_gpt_trace, sagemaker_data_capture), as in aiperf;
// the other formats ignore them.
type Options struct {
	Type string // one of Types; "" detects the format from the first record

	// StartOffsetNS and EndOffsetNS drop rows whose timestamp lies outside
	// [start, end] (both inclusive, nil = open). Rows without a timestamp
	// are kept. For sagemaker_data_capture the timestamps compared are the
	// zero-aligned ones.
	StartOffsetNS, EndOffsetNS *int64
	// MaxInputLength > 0 drops rows whose InputLength exceeds it.
	MaxInputLength int
	// MaxOutputLength > 0 caps OutputLength to it.
	MaxOutputLength int
}

// decoder produces the rows of one format.
type decoder interface {
	next() (*Row, error)
}

// preloaded is the decoder of a format that must read its whole input
// before the first row (to sort, to group sessions, or because it is one
// JSON document): load runs once, on the first call to next.
type preloaded struct {
	load   func() ([]*Row, error)
	rows   []*Row
	loaded bool
}

func (p *preloaded) next() (*Row, error) {
	if !p.loaded {
		rows, err := p.load()
		if err != nil {
			return nil, err
		}
		p.rows, p.loaded = rows, true
	}
	if len(p.rows) == 0 {
		return nil, io.EOF
	}
	row := p.rows[0]
	p.rows[0] = nil // let the row go once the caller is done with it
	p.rows = p.rows[1:]
	return row, nil
}

// Reader returns the rows of a trace one at a time. A Reader is not safe
// for concurrent use.
type Reader struct {
	typ     string
	dec     decoder
	filt    *filter
	closers []io.Closer
	err     error
}

// Open reads the trace at path, a file or (for raw_payload and
// sagemaker_data_capture) a directory. "-" is not supported here: pass
// os.Stdin to [NewReader].
func Open(path string, opt Options) (*Reader, error) {
	if path == "-" {
		return nil, &Error{File: path, Err: errors.New("stdin is not supported by trace.Open; use trace.NewReader")}
	}
	if err := checkType(opt.Type); err != nil {
		return nil, &Error{File: path, Err: err}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return openDir(path, opt)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newReader(f, path, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closers = append(r.closers, f)
	return r, nil
}

// NewReader reads a trace from the stream r; name is used in errors and as
// [Row.Source]. Directory modes are not available on a stream. The caller
// closes r.
func NewReader(r io.Reader, name string, opt Options) (*Reader, error) {
	if err := checkType(opt.Type); err != nil {
		return nil, &Error{File: name, Err: err}
	}
	return newReader(r, name, opt)
}

func checkType(t string) error {
	if t == "" || slices.Contains(Types, t) {
		return nil
	}
	return fmt.Errorf("%w %q (want one of %s)", ErrUnknownType, t, strings.Join(Types, ", "))
}

func newReader(r io.Reader, name string, opt Options) (*Reader, error) {
	r = skipBOM(r)
	typ := opt.Type
	if typ == "" {
		var err error
		if typ, r, err = detectStream(r, name); err != nil {
			return nil, err
		}
	}
	rd := &Reader{typ: typ, filt: &filter{opt: opt}}
	if !isTraceType(typ) {
		rd.filt = &filter{} // aiperf applies the filters in trace loaders only
	}
	switch typ {
	case TypeMooncake:
		rd.dec = newMooncakeDecoder(name, newLineReader(r), rd.filt)
	case TypeBailian:
		rd.dec = &preloaded{load: (&bailianDecoder{name: name, lr: newLineReader(r), filt: rd.filt}).load}
	case TypeBurstGPT:
		dec, err := newBurstDecoder(r, name, rd.filt)
		if err != nil {
			return nil, err
		}
		rd.dec = dec
	case TypeSageMaker:
		rd.dec = &preloaded{load: (&sagemakerDecoder{stream: r, streamName: name, filt: rd.filt}).load}
	case TypeRawPayload:
		rd.dec = &rawPayloadDecoder{name: name, lr: newLineReader(r)}
	case TypeInputsJSON:
		rd.dec = &preloaded{load: (&inputsJSONDecoder{name: name, r: r}).load}
	case TypeSingleTurn:
		rd.dec = newCustomDecoder(name, newLineReader(r), false)
	case TypeMultiTurn:
		rd.dec = newCustomDecoder(name, newLineReader(r), true)
	}
	return rd, nil
}

func isTraceType(t string) bool {
	switch t {
	case TypeMooncake, TypeBailian, TypeBurstGPT, TypeSageMaker:
		return true
	}
	return false
}

// detectStream detects the format of r from its first non-blank line and
// returns a reader that replays the whole stream.
func detectStream(r io.Reader, name string) (string, io.Reader, error) {
	var seen bytes.Buffer
	lr := newLineReader(io.TeeReader(r, &seen))
	first, line, err := lr.record()
	if err == io.EOF {
		return "", nil, &Error{File: name, Err: errors.New("empty input: cannot detect the trace type; pass it explicitly")}
	}
	if err != nil {
		return "", nil, ioError(name, line, err)
	}
	typ, derr := Detect(first)
	if derr != nil && mayStartInputsJSON(first) {
		// Maybe a pretty-printed inputs_json document: read the rest.
		rest, err := io.ReadAll(r)
		if err != nil {
			return "", nil, ioError(name, 0, err)
		}
		doc := append(seen.Bytes(), rest...)
		if isInputsJSON(bytes.TrimSpace(doc)) {
			return TypeInputsJSON, bytes.NewReader(doc), nil
		}
	}
	if derr != nil {
		return "", nil, &Error{File: name, Line: line, Err: derr}
	}
	return typ, io.MultiReader(bytes.NewReader(seen.Bytes()), r), nil
}

// mayStartInputsJSON reports whether an undetectable first line may open a
// pretty-printed inputs_json document ("{" alone, as json.dump with an
// indent writes it, or a short line with "data"). Other lines are not worth
// reading the whole input for.
func mayStartInputsJSON(first []byte) bool {
	if bytes.Equal(first, []byte("{")) {
		return true
	}
	return first[0] == '{' && len(first) < 4096 && bytes.Contains(first, []byte(`"data"`)) && !validJSON(first)
}

// openDir opens a directory input: raw_payload (each top-level *.jsonl file
// is one session) or sagemaker_data_capture (every **/*.jsonl file).
func openDir(dir string, opt Options) (*Reader, error) {
	typ := opt.Type
	if typ == "" {
		var err error
		if typ, err = detectDir(dir); err != nil {
			return nil, err
		}
	}
	var files []string
	var err error
	switch typ {
	case TypeRawPayload:
		files, err = jsonlFiles(dir, false)
	case TypeSageMaker:
		files, err = jsonlFiles(dir, true)
		if err == nil && len(files) == 0 {
			err = &Error{File: dir, Err: errors.New("no .jsonl files found in directory")}
		}
	default:
		return nil, &Error{File: dir, Err: fmt.Errorf("is a directory; only %s and %s read directories", TypeRawPayload, TypeSageMaker)}
	}
	if err != nil {
		return nil, err
	}
	rd := &Reader{typ: typ, filt: &filter{opt: opt}}
	if typ == TypeRawPayload {
		rd.filt = &filter{}
		dec := &rawPayloadDirDecoder{files: files}
		rd.dec = dec
		rd.closers = append(rd.closers, dec)
		return rd, nil
	}
	rd.dec = &preloaded{load: (&sagemakerDecoder{paths: files, filt: rd.filt}).load}
	return rd, nil
}

// jsonlFiles lists the *.jsonl files of dir in sorted order (component by
// component, as Python sorts paths), recursively or not.
func jsonlFiles(dir string, recursive bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			return nil // a dangling link or a link to a directory
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// detectDir detects the format of a directory from the first record of its
// first *.jsonl file: sagemaker_data_capture anywhere below dir, or
// raw_payload in dir itself (nested files are not read in raw_payload
// mode, so they are skipped here).
func detectDir(dir string) (string, error) {
	files, err := jsonlFiles(dir, true)
	if err != nil {
		return "", err
	}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		first, line, err := newLineReader(skipBOM(f)).record()
		f.Close()
		if err == io.EOF {
			continue
		}
		if err != nil {
			return "", ioError(p, line, err)
		}
		typ, derr := Detect(first)
		topLevel := filepath.Dir(p) == filepath.Clean(dir)
		switch {
		case typ == TypeSageMaker:
			return typ, nil
		case !topLevel:
			continue
		case derr != nil:
			return "", &Error{File: p, Line: line, Err: derr}
		case typ == TypeRawPayload:
			return typ, nil
		}
		return "", &Error{File: p, Line: line, Err: fmt.Errorf("a directory input must hold %s or %s files, this looks like %s", TypeRawPayload, TypeSageMaker, typ)}
	}
	return "", &Error{File: dir, Err: errors.New("no non-empty .jsonl file found: cannot detect the trace type")}
}

// Type returns the format being decoded.
func (r *Reader) Type() string { return r.typ }

// Next returns the next row, or io.EOF after the last one. After an error
// other than io.EOF, Next keeps returning that error.
func (r *Reader) Next() (*Row, error) {
	if r.err != nil {
		return nil, r.err
	}
	row, err := r.dec.next()
	if err != nil {
		r.err = err
		return nil, err
	}
	return row, nil
}

// Dropped returns how many rows the offset filters and the input-length
// filter have dropped so far.
func (r *Reader) Dropped() (byOffset, byLength int) {
	return r.filt.byOffset, r.filt.byLength
}

// Capped returns how many rows had their OutputLength capped.
func (r *Reader) Capped() int { return r.filt.capped }

// Skipped returns how many burst_gpt_trace data rows were skipped because a
// required cell was not a number (aiperf skips them silently).
func (r *Reader) Skipped() int {
	if d, ok := r.dec.(*burstDecoder); ok {
		return d.skipped
	}
	return 0
}

// Close releases the files that Open opened. It does not close a stream
// passed to NewReader.
func (r *Reader) Close() error {
	var first error
	for _, c := range r.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	r.closers = nil
	return first
}

// filter applies Options' offsets and length limits, counting what it does.
type filter struct {
	opt                        Options
	byOffset, byLength, capped int
}

// keep reports whether row passes the filters; it caps OutputLength.
func (f *filter) keep(row *Row) bool {
	o := &f.opt
	if row.HasTimestamp && ((o.StartOffsetNS != nil && row.TimestampNS < *o.StartOffsetNS) ||
		(o.EndOffsetNS != nil && row.TimestampNS > *o.EndOffsetNS)) {
		f.byOffset++
		return false
	}
	if o.MaxInputLength > 0 && row.InputLength > o.MaxInputLength {
		f.byLength++
		return false
	}
	if o.MaxOutputLength > 0 && row.HasOutputLength && row.OutputLength > o.MaxOutputLength {
		row.OutputLength = o.MaxOutputLength
		f.capped++
	}
	return true
}

// ioError wraps a read error with its place; io.EOF passes through.
func ioError(name string, line int64, err error) error {
	if err == io.EOF {
		return io.EOF
	}
	return &Error{File: name, Line: line, Err: err}
}

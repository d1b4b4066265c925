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

	"github.com/aiperf/toolkit/lib/internal/filekind"
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

	// MaxLineBytes bounds the length of one input line, and with it the
	// memory a reader needs (a small multiple of the longest line); a longer
	// line is an error (a *LineTooLongError). 0 means DefaultMaxLineBytes.
	MaxLineBytes int
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
	read    int64 // bytes read from the input so far
	size    int64 // bytes of the input files (0 for a stream)
}

// counter counts the bytes read through it into *n.
type counter struct {
	r io.Reader
	n *int64
}

func (c counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// Open reads the trace at path, a file or (for raw_payload and
// sagemaker_data_capture) a directory. "-" is not supported here: pass
// os.Stdin to [NewReader]. A named pipe or a device given as path is read
// as a stream; inside a directory only regular files are read.
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
	if opt.Type == TypeWeka || (opt.Type == "" && strings.HasSuffix(path, ".json") && fi.Mode().IsRegular() && probeWeka(path, opt.MaxLineBytes)) {
		rd := &Reader{typ: TypeWeka, filt: &filter{opt: opt}, size: fi.Size()}
		wd := &wekaDecoder{files: []string{path}, maxLine: opt.MaxLineBytes, read: &rd.read, filt: rd.filt}
		rd.dec, rd.closers = wd, append(rd.closers, wd)
		return rd, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	rd := &Reader{}
	if fi.Mode().IsRegular() {
		rd.size = fi.Size()
	}
	if err := rd.init(counter{f, &rd.read}, path, opt); err != nil {
		f.Close()
		return nil, err
	}
	rd.closers = append(rd.closers, f)
	return rd, nil
}

// NewReader reads a trace from the stream r; name is used in errors and as
// [Row.Source]. Directory modes are not available on a stream. The caller
// closes r.
func NewReader(r io.Reader, name string, opt Options) (*Reader, error) {
	if err := checkType(opt.Type); err != nil {
		return nil, &Error{File: name, Err: err}
	}
	rd := &Reader{}
	if err := rd.init(counter{r, &rd.read}, name, opt); err != nil {
		return nil, err
	}
	return rd, nil
}

func checkType(t string) error {
	if t == "" || slices.Contains(Types, t) {
		return nil
	}
	return fmt.Errorf("%w %q (want one of %s)", ErrUnknownType, t, strings.Join(Types, ", "))
}

// init sets up the decoder of one stream, detecting its format from the
// first record when opt.Type is empty.
func (rd *Reader) init(r io.Reader, name string, opt Options) error {
	lr := newLineReader(r, opt.MaxLineBytes)
	typ := opt.Type
	if typ == "" {
		var doc []byte
		var err error
		if typ, doc, err = detectStream(lr, name, opt.MaxLineBytes); err != nil {
			return err
		}
		if doc != nil && typ == TypeWeka {
			rd.typ, rd.filt = typ, &filter{opt: opt}
			rd.dec = &wekaDecoder{files: []string{name}, data: [][]byte{doc}, filt: rd.filt}
			return nil
		}
		if doc != nil { // a pretty-printed inputs_json document, read whole
			rd.typ, rd.filt = typ, &filter{}
			rd.dec = &preloaded{load: func() ([]*Row, error) { return parseInputsJSON(name, doc) }}
			return nil
		}
	}
	rd.typ, rd.filt = typ, &filter{opt: opt}
	if !isTraceType(typ) {
		rd.filt = &filter{} // aiperf applies the filters in trace loaders only
	}
	switch typ {
	case TypeMooncake:
		rd.dec = newMooncakeDecoder(name, lr, rd.filt)
	case TypeBailian:
		rd.dec = &preloaded{load: (&bailianDecoder{name: name, lr: lr, filt: rd.filt}).load}
	case TypeBurstGPT:
		dec, err := newBurstDecoder(newLimitLines(lr.Rest(), name, opt.MaxLineBytes), name, rd.filt)
		if err != nil {
			return err
		}
		rd.dec = dec
	case TypeSageMaker:
		rd.dec = &preloaded{load: (&sagemakerDecoder{stream: lr, streamName: name, maxLine: opt.MaxLineBytes, filt: rd.filt}).load}
	case TypeRawPayload:
		rd.dec = &rawPayloadDecoder{name: name, lr: lr}
	case TypeInputsJSON:
		rd.dec = &preloaded{load: (&inputsJSONDecoder{name: name, r: newLimitLines(lr.Rest(), name, opt.MaxLineBytes)}).load}
	case TypeSingleTurn:
		rd.dec = newCustomDecoder(name, lr, false)
	case TypeMultiTurn:
		rd.dec = newCustomDecoder(name, lr, true)
	case TypeWeka:
		doc, err := io.ReadAll(newLimitLines(lr.Rest(), name, opt.MaxLineBytes))
		if err != nil {
			return ioError(name, 0, err)
		}
		rd.dec = &wekaDecoder{files: []string{name}, data: [][]byte{doc}, filt: rd.filt}
	}
	return nil
}

func isTraceType(t string) bool {
	switch t {
	case TypeMooncake, TypeBailian, TypeBurstGPT, TypeSageMaker, TypeWeka:
		return true
	}
	return false
}

// detectStream detects the format of the stream from its first non-blank
// line, which it leaves to be read again. A first line that may open a
// pretty-printed inputs_json document makes it read the whole stream:
// doc is then that document.
func detectStream(lr *lineReader, name string, maxLine int) (typ string, doc []byte, err error) {
	first, line, err := lr.Record()
	if err == io.EOF {
		return "", nil, &Error{File: name, Err: errors.New("empty input: cannot detect the trace type; pass it explicitly")}
	}
	if err != nil {
		return "", nil, ioError(name, line, err)
	}
	typ, derr := Detect(first)
	lr.Unread()
	if derr != nil && mayStartInputsJSON(first) {
		doc, err := io.ReadAll(newLimitLines(lr.Rest(), name, maxLine))
		if err != nil {
			return "", nil, ioError(name, 0, err)
		}
		if isInputsJSON(bytes.TrimSpace(doc)) {
			return TypeInputsJSON, doc, nil
		}
		if isWeka(trimSpaceBOM(doc)) {
			return TypeWeka, doc, nil
		}
	}
	if derr != nil {
		return "", nil, &Error{File: name, Line: line, Err: derr}
	}
	return typ, nil, nil
}

// mayStartInputsJSON reports whether an undetectable first line may open a
// pretty-printed inputs_json document ("{" alone, as json.dump with an
// indent writes it, or a short line with "data"). Other lines are not worth
// reading the whole input for.
func mayStartInputsJSON(first []byte) bool {
	if bytes.Equal(first, []byte("{")) {
		return true
	}
	if first[0] == '{' && bytes.Contains(first, []byte(`"hash_id_scope"`)) && !validJSON(first) {
		return true // the head of a weka_trace document
	}
	return first[0] == '{' && len(first) < 4096 && bytes.Contains(first, []byte(`"data"`)) && !validJSON(first)
}

// openDir opens a directory input: raw_payload (each top-level *.jsonl file
// is one session) or sagemaker_data_capture (every **/*.jsonl file).
func openDir(dir string, opt Options) (*Reader, error) {
	typ := opt.Type
	if typ == "" || typ == TypeWeka {
		files, err := wekaFiles(dir)
		if err != nil {
			return nil, err
		}
		if typ == TypeWeka || (len(files) > 0 && probeWeka(files[0], opt.MaxLineBytes)) {
			if len(files) == 0 {
				return nil, &Error{File: dir, Err: errors.New("no .json files found in directory")}
			}
			rd := &Reader{typ: TypeWeka, filt: &filter{opt: opt}}
			for _, f := range files {
				if fi, err := os.Stat(f); err == nil {
					rd.size += fi.Size()
				}
			}
			wd := &wekaDecoder{files: files, maxLine: opt.MaxLineBytes, read: &rd.read, filt: rd.filt}
			rd.dec, rd.closers = wd, append(rd.closers, wd)
			return rd, nil
		}
	}
	if typ == "" {
		var err error
		if typ, err = detectDir(dir, opt.MaxLineBytes); err != nil {
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
		return nil, &Error{File: dir, Err: fmt.Errorf("is a directory; only %s, %s and %s read directories", TypeRawPayload, TypeSageMaker, TypeWeka)}
	}
	if err != nil {
		return nil, err
	}
	rd := &Reader{typ: typ, filt: &filter{opt: opt}}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			rd.size += fi.Size()
		}
	}
	if typ == TypeRawPayload {
		rd.filt = &filter{}
		dec := &rawPayloadDirDecoder{files: files, maxLine: opt.MaxLineBytes, read: &rd.read}
		rd.dec = dec
		rd.closers = append(rd.closers, dec)
		return rd, nil
	}
	rd.dec = &preloaded{load: (&sagemakerDecoder{paths: files, maxLine: opt.MaxLineBytes, read: &rd.read, filt: rd.filt}).load}
	return rd, nil
}

// DirFiles lists every file a directory input may be read from, in the
// order the readers take them: its *.jsonl files at any depth (the
// SageMaker rule; raw_payload reads only the top level of these), links
// followed to regular files, linked folders not entered. It is what cache
// keys digest for a trace directory.
// Its *.json files (weka_trace) come after them.
func DirFiles(dir string) ([]string, error) {
	files, err := jsonlFiles(dir, true)
	if err != nil {
		return nil, err
	}
	w, err := wekaFiles(dir)
	return append(files, w...), err
}

// jsonlFiles lists the *.jsonl files of dir in sorted order (component by
// component, as Python sorts paths), recursively or not. A *.jsonl entry
// that is not a regular file (or a link to one) is an error: a named pipe
// would block the reader forever, and a device or socket is no capture. A
// link to a directory and a dangling link are skipped.
func jsonlFiles(dir string, recursive bool) ([]string, error) {
	// A trailing separator makes the walk enter dir when it is a symlink
	// to a folder (WalkDir does not follow a link at its root).
	root := dir
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil || fi.IsDir():
			return nil // a dangling link or a link to a directory
		case !fi.Mode().IsRegular():
			return &Error{File: p, Err: fmt.Errorf("not a regular file (%s): a directory input reads regular files only", filekind.Of(fi.Mode()))}
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
func detectDir(dir string, maxLine int) (string, error) {
	files, err := jsonlFiles(dir, true)
	if err != nil {
		return "", err
	}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		first, line, err := newLineReader(f, maxLine).Record()
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

// Progress returns the bytes read from the input so far and the size of
// the input files (0 when reading a stream).
func (r *Reader) Progress() (read, size int64) { return r.read, r.size }

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

// ioError wraps a read error with its place; io.EOF and an *Error pass
// through.
func ioError(name string, line int64, err error) error {
	var e *Error
	if err == io.EOF || errors.As(err, &e) {
		return err
	}
	return &Error{File: name, Line: line, Err: err}
}

package result

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/aiperf/toolkit/lib/internal/jsonl"
	"github.com/aiperf/toolkit/lib/jsonx"
)

// MaxChunks bounds the chunk offsets of one record: a replay fails a
// response with more content chunks (4,194,304: a stream of as many
// tokens), so that every record it writes is readable (MaxLine).
const MaxChunks = 1 << 22

// MaxLine bounds one records line, above the longest line a replay writes:
// MaxChunks offsets of at most 20 characters and a comma (84 MiB), error
// messages and types of at most a few KiB (lib/replay clips them), the
// ids the run makes, and the store's session id. A record with every
// chunk of a 100,000-token stream is about 1 MB.
const MaxLine = 256 << 20

// Decoder reads records JSONL. Blank lines are skipped, and so are runs'
// end lines (End), which are not requests: End returns the last one read.
//
// It refuses a file that contradicts itself (runCheck), naming the line
// and the member: a request id given twice, a line of another run than
// the one the file's first line starts, an end line whose count is not
// the lines before it, a second end line or a record after it; and lines
// whose times or token counts cannot be (Parse).
type Decoder struct {
	lr    *jsonl.Reader
	name  string
	end   *End
	check runCheck
}

// End returns the end line read last (nil before one): after io.EOF, the
// end of the file's last run, or nil when that run wrote none.
func (d *Decoder) End() *End { return d.end }

// NewDecoder reads from r; name is used in error messages.
func NewDecoder(r io.Reader, name string) *Decoder {
	return &Decoder{lr: jsonl.NewReaderSize(r, 256<<10, MaxLine), name: name}
}

// LineNo returns the number of the line read last (1-based).
func (d *Decoder) LineNo() int64 { return d.lr.Line() }

// Next decodes the next record into r; it returns io.EOF at the end.
func (d *Decoder) Next(r *Record) error {
	for {
		if err := d.next(r); err != nil {
			return err
		}
		var err error
		if r.End != nil {
			err = d.check.end(r.End, d.LineNo())
		} else {
			err = d.check.record(r, d.LineNo())
		}
		if err != nil {
			de := err.(*DecodeError)
			de.File = d.name
			return de
		}
		if r.End == nil {
			if r.Run != nil {
				d.end = nil // a new run: the end read before was another's
			}
			return nil
		}
		d.end = r.End
	}
}

func (d *Decoder) next(r *Record) error {
	line, n, err := d.lr.Record()
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		var tl *jsonl.LineTooLongError
		if errors.As(err, &tl) {
			return &DecodeError{File: d.name, Line: n, Err: err}
		}
		return fmt.Errorf("read %s: %w", d.name, err)
	}
	if err := Parse(line, r); err != nil {
		if d.lr.Unterminated() && n > 1 && !jsonx.Valid(line) {
			// The last line, cut short: not JSON, and no newline (a
			// partial copy of the file; a replay commits its results
			// whole). The records before it stand; rundir.Ends names the
			// cut for report's warning. A complete line without its
			// newline is read, or refused, as any line; a file of one
			// cut line holds no record: an error.
			*r = Record{}
			return io.EOF
		}
		var de *DecodeError
		if errors.As(err, &de) {
			de.File, de.Line = d.name, n
			return de
		}
		return &DecodeError{File: d.name, Line: n, Err: err}
	}
	return nil
}

func fieldErr(field, format string, args ...any) error {
	return &DecodeError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Parse decodes one line (without its newline) into r.
func Parse(line []byte, r *Record) error {
	*r = Record{}
	i := jsonx.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return errors.New("not a JSON object")
	}
	p := lineParser{r: r}
	end, err := jsonx.Fields(line, i, p.field)
	if err != nil {
		var se *jsonx.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("malformed JSON: %v", err)
		}
		return err
	}
	if jsonx.SkipSpace(line, end) != len(line) {
		return fmt.Errorf("malformed JSON: data after the object at byte %d", end)
	}
	return p.finish()
}

// lineParser collects the fields of one line (the shape of lib/record's).
type lineParser struct {
	r               *Record
	haveV           bool
	haveFirstOutput bool
	isEnd           bool // "end":true: the run's end line (End)
	// endv holds the values of the end line's other members, decoded
	// (endField) only when the line is one: on a record they are foreign
	// keys, ignored as every unknown key is.
	endv [][2][]byte
}

// field decodes one member: one case per key, unknown keys ignored. Keys
// we know need no unescaping, so they are compared raw. A key given twice
// takes its last value (chunk offsets add up, a true flag stays true).
func (p *lineParser) field(key, v []byte, _ int) error {
	k := string(key[1 : len(key)-1])
	r := p.r
	if isEndKey(k) {
		p.endv = append(p.endv, [2][]byte{key, v})
		return nil
	}
	var err error
	switch k {
	case "end":
		p.isEnd, err = flagField(k, v, p.isEnd) // false: a record
	case "v":
		err = checkVersion(v)
		p.haveV = true
	case "record":
		r.Record, err = intField(k, v)
	case "turn":
		r.Turn, err = intField(k, v)
	case "session_num":
		r.SessionNum, err = intField(k, v)
	case "shard":
		r.Shard, err = intField(k, v)
	case "shards":
		r.Shards, err = intField(k, v)
	case "status":
		r.Status, err = intField(k, v)
	case "session":
		r.Session, err = parseString(k, v)
	case "x_request_id":
		r.RequestID, err = parseString(k, v)
	case "x_correlation_id":
		r.CorrelationID, err = parseString(k, v)
	case "phase":
		r.Phase, err = enumField(k, v, PhaseWarmup, PhaseProfiling)
	case "output_tokens_source":
		r.OutputSource, err = enumField(k, v, SourceUsage, SourceClient)
	case "intended_unix_ns":
		r.IntendedNS, err = int64Field(k, v)
	case "sent_unix_ns":
		r.SentNS, err = int64Field(k, v)
	case "first_byte_unix_ns":
		r.FirstByteNS, err = int64Field(k, v)
	case "first_token_unix_ns":
		r.FirstTokenNS, err = int64Field(k, v)
	case "first_output_unix_ns":
		r.FirstOutputNS, err = int64Field(k, v)
		p.haveFirstOutput = true
	case "end_unix_ns":
		r.EndNS, err = int64Field(k, v)
	case "ceiling_wait_ns":
		r.CeilingWaitNS, err = int64Field(k, v)
	case "client_output_tokens":
		r.ClientOutputTokens, err = tokenField(k, v)
		r.ClientCounted = true
	case "client_reasoning_tokens":
		r.ClientReasoningTokens, err = tokenField(k, v)
		r.ClientCounted = true
	case "input_tokens":
		r.InputTokens, err = tokenField(k, v)
	case "max_tokens":
		r.MaxTokens, err = tokenField(k, v)
	case "output_tokens":
		r.OutputTokens, err = tokenField(k, v)
	case "reasoning_tokens":
		r.ReasoningTokens, err = tokenField(k, v)
	case "chunk_offsets_ns":
		r.ChunkOffsetsNS, err = chunkOffsets(r.ChunkOffsetsNS, v)
	case "cancelled":
		r.Cancelled, err = flagField(k, v, r.Cancelled)
	case "streamed":
		r.Streamed, err = flagField(k, v, r.Streamed)
	case "run":
		r.Run, err = parseRun(v)
	case "error":
		if string(v) != "null" {
			r.Err, err = parseError(v)
		}
	case "usage":
		if string(v) != "null" {
			r.Usage, err = parseUsage(v)
		}
	case "http":
		if string(v) != "null" {
			r.HTTP, err = parseHTTP(v)
		}
	}
	return err
}

// finish checks the line as a whole once every field is in.
func (p *lineParser) finish() error {
	if !p.haveV {
		return fieldErr("v", "missing (every replay records line carries \"v\":1)")
	}
	if p.isEnd {
		var end End
		for _, kv := range p.endv {
			if err := endField(&end, string(kv[0][1:len(kv[0])-1]), kv[1]); err != nil {
				return err
			}
		}
		p.r.End = &end
		return nil
	}
	if !p.haveFirstOutput {
		p.r.FirstOutputNS = p.r.FirstTokenNS
	}
	return p.r.checkTimes()
}

func checkVersion(v []byte) error {
	x, ok := jsonx.ParseUint(v)
	if !ok {
		return fieldErr("v", "not an integer: %s", clip(v))
	}
	if x != Version {
		return fieldErr("v", "unknown replay records version %d (this build reads v%d)", x, Version)
	}
	return nil
}

// intField parses a count or index: an integer in [0, MaxInt32].
func intField(k string, v []byte) (int, error) {
	x, err := parseInt(k, v, 0, math.MaxInt32)
	return int(x), err
}

// int64Field parses a time or duration: an integer in [0, MaxInt64].
func int64Field(k string, v []byte) (int64, error) {
	return parseInt(k, v, 0, math.MaxInt64)
}

// tokenField parses a token count: an integer in [0, MaxTokens].
func tokenField(k string, v []byte) (int64, error) {
	return parseInt(k, v, 0, MaxTokens)
}

// enumField parses a string that must be a or b.
func enumField(k string, v []byte, a, b string) (string, error) {
	s, err := parseString(k, v)
	if err == nil && s != a && s != b {
		return "", fieldErr(k, "want %q or %q, got %q", a, b, s)
	}
	return s, err
}

// flagField parses a boolean that, once true, stays true.
func flagField(k string, v []byte, was bool) (bool, error) {
	switch string(v) {
	case "true":
		return true, nil
	case "false":
		return was, nil
	}
	return was, fieldErr(k, "not a boolean: %s", clip(v))
}

// chunkOffsets appends the array of offsets v to dst.
func chunkOffsets(dst []int64, v []byte) ([]int64, error) {
	if v[0] != '[' {
		return dst, fieldErr("chunk_offsets_ns", "not an array")
	}
	_, err := jsonx.Elements(v, 0, func(_ int, e []byte, _ int) error {
		x, err := parseInt("chunk_offsets_ns", e, 0, math.MaxInt64)
		if err != nil {
			return err
		}
		dst = append(dst, x)
		return nil
	})
	return dst, err
}

// checkTimes refuses times that contradict each other (a garbled or edited
// file): every time of the answer is within [send, end], and the chunks
// are in arrival order, the last at or before the end. (Whether the times
// themselves can be is CheckWindow's, which needs a clock.)
func (r *Record) checkTimes() error {
	ts := r.times()
	if r.SentNS != 0 {
		for _, t := range ts[2:] { // the answer's times and the end
			if t.ns != 0 && t.ns < r.SentNS {
				return fieldErr(t.field, "%d is before sent_unix_ns %d", t.ns, r.SentNS)
			}
		}
	}
	if r.EndNS != 0 {
		for _, t := range ts[2:5] { // the answer's
			if t.ns > r.EndNS {
				return fieldErr(t.field, "%d is after end_unix_ns %d: the answer came after it ended", t.ns, r.EndNS)
			}
		}
	}
	for i := 1; i < len(r.ChunkOffsetsNS); i++ {
		if c, p := r.ChunkOffsetsNS[i], r.ChunkOffsetsNS[i-1]; c < p {
			return fieldErr("chunk_offsets_ns", "%d after %d: not in arrival order", c, p)
		}
	}
	if n := len(r.ChunkOffsetsNS); n > 0 && r.SentNS != 0 && r.EndNS != 0 && r.ChunkOffsetsNS[n-1] > r.EndNS-r.SentNS {
		return fieldErr("chunk_offsets_ns", "%d is after the end (end_unix_ns - sent_unix_ns = %d)", r.ChunkOffsetsNS[n-1], r.EndNS-r.SentNS)
	}
	return nil
}

func parseError(v []byte) (*Error, error) {
	if v[0] != '{' {
		return nil, fieldErr("error", "not an object")
	}
	e := &Error{}
	_, err := jsonx.Fields(v, 0, func(key, v []byte, _ int) error {
		switch string(key) {
		case `"code"`:
			x, err := parseInt("error.code", v, 0, math.MaxInt32)
			if err != nil {
				return err
			}
			e.Code = int(x)
		case `"type"`:
			s, err := parseString("error.type", v)
			if err != nil {
				return err
			}
			e.Type = s
		case `"message"`:
			s, err := parseString("error.message", v)
			if err != nil {
				return err
			}
			e.Message = s
		}
		return nil
	})
	return e, err
}

func parseUsage(v []byte) (*Usage, error) {
	if v[0] != '{' {
		return nil, fieldErr("usage", "not an object")
	}
	u := &Usage{}
	_, err := jsonx.Fields(v, 0, func(key, v []byte, _ int) error {
		var dst *int64
		switch string(key) {
		case `"prompt_tokens"`:
			dst = &u.PromptTokens
		case `"completion_tokens"`:
			dst = &u.CompletionTokens
		case `"total_tokens"`:
			dst = &u.TotalTokens
		case `"reasoning_tokens"`:
			dst = &u.ReasoningTokens
		case `"cached_tokens"`:
			dst, u.HasCached = &u.CachedTokens, true
		default:
			return nil
		}
		x, err := parseInt("usage."+string(key[1:len(key)-1]), v, 0, MaxTokens)
		*dst = x
		return err
	})
	return u, err
}

func parseString(field string, v []byte) (string, error) {
	if v[0] != '"' {
		return "", fieldErr(field, "not a string: %s", clip(v))
	}
	s, err := jsonx.Unquote(v)
	if err != nil {
		return "", fieldErr(field, "%v", err)
	}
	return s, nil
}

// parseInt parses a JSON integer in [lo, hi].
func parseInt(field string, v []byte, lo, hi int64) (int64, error) {
	neg := len(v) > 0 && v[0] == '-'
	digits := v
	if neg {
		digits = v[1:]
	}
	u, ok := jsonx.ParseUint(digits)
	if !ok || u > math.MaxInt64 {
		return 0, fieldErr(field, "not an integer in range: %s", clip(v))
	}
	x := int64(u)
	if neg {
		x = -x
	}
	if x < lo || x > hi {
		return 0, fieldErr(field, "%d out of range [%d, %d]", x, lo, hi)
	}
	return x, nil
}

func clip(v []byte) string {
	if len(v) > 40 {
		return string(v[:40]) + "..."
	}
	return string(v)
}

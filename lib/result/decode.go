package result

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

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

// Decoder reads records JSONL. Blank lines are skipped.
type Decoder struct {
	r      *bufio.Reader
	name   string
	lineNo int64
	buf    []byte
}

// NewDecoder reads from r; name is used in error messages.
func NewDecoder(r io.Reader, name string) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 256<<10), name: name}
}

// LineNo returns the number of the line read last (1-based).
func (d *Decoder) LineNo() int64 { return d.lineNo }

func (d *Decoder) readLine() ([]byte, error) {
	line, err := d.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		d.buf = append(d.buf[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(d.buf) > MaxLine {
				return nil, &DecodeError{File: d.name, Line: d.lineNo + 1, Err: fmt.Errorf("line longer than %d bytes", MaxLine)}
			}
			line, err = d.r.ReadSlice('\n')
			d.buf = append(d.buf, line...)
		}
		line = d.buf
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	return line, err
}

// Next decodes the next record into r; it returns io.EOF at the end.
func (d *Decoder) Next(r *Record) error {
	for {
		line, err := d.readLine()
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				return err
			}
			return fmt.Errorf("read %s: %w", d.name, err)
		}
		d.lineNo++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := Parse(line, r); err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				de.File, de.Line = d.name, d.lineNo
				return de
			}
			return &DecodeError{File: d.name, Line: d.lineNo, Err: err}
		}
		return nil
	}
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
	var haveV, haveFirstOutput bool
	end, err := jsonx.Fields(line, i, func(key, v []byte, _ int) error {
		k := string(key[1 : len(key)-1])
		switch k {
		case "v":
			x, ok := jsonx.ParseUint(v)
			if !ok {
				return fieldErr(k, "not an integer: %s", clip(v))
			}
			if x != Version {
				return fieldErr(k, "unknown replay records version %d (this build reads v%d)", x, Version)
			}
			haveV = true
		case "record", "turn", "status", "session_num", "shard", "shards":
			x, err := parseInt(k, v, 0, math.MaxInt32)
			if err != nil {
				return err
			}
			switch k {
			case "record":
				r.Record = int(x)
			case "turn":
				r.Turn = int(x)
			case "session_num":
				r.SessionNum = int(x)
			case "shard":
				r.Shard = int(x)
			case "shards":
				r.Shards = int(x)
			default:
				r.Status = int(x)
			}
		case "session", "x_request_id", "x_correlation_id", "phase", "output_tokens_source":
			s, err := parseString(k, v)
			if err != nil {
				return err
			}
			switch k {
			case "session":
				r.Session = s
			case "x_request_id":
				r.RequestID = s
			case "x_correlation_id":
				r.CorrelationID = s
			case "phase":
				if s != PhaseWarmup && s != PhaseProfiling {
					return fieldErr(k, "want %q or %q, got %q", PhaseWarmup, PhaseProfiling, s)
				}
				r.Phase = s
			default:
				if s != SourceUsage && s != SourceClient {
					return fieldErr(k, "want %q or %q, got %q", SourceUsage, SourceClient, s)
				}
				r.OutputSource = s
			}
		case "intended_unix_ns", "sent_unix_ns", "first_byte_unix_ns", "first_token_unix_ns", "first_output_unix_ns", "end_unix_ns":
			x, err := parseInt(k, v, 0, math.MaxInt64)
			if err != nil {
				return err
			}
			*timeField(r, k) = x
			haveFirstOutput = haveFirstOutput || k == "first_output_unix_ns"
		case "ceiling_wait_ns":
			x, err := parseInt(k, v, 0, math.MaxInt64)
			if err != nil {
				return err
			}
			r.CeilingWaitNS = x
		case "client_output_tokens", "client_reasoning_tokens":
			x, err := parseInt(k, v, 0, math.MaxInt64)
			if err != nil {
				return err
			}
			r.ClientCounted = true
			if k == "client_output_tokens" {
				r.ClientOutputTokens = x
			} else {
				r.ClientReasoningTokens = x
			}
		case "input_tokens", "max_tokens", "output_tokens", "reasoning_tokens":
			x, err := parseInt(k, v, 0, math.MaxInt64)
			if err != nil {
				return err
			}
			switch k {
			case "input_tokens":
				r.InputTokens = x
			case "max_tokens":
				r.MaxTokens = x
			case "output_tokens":
				r.OutputTokens = x
			default:
				r.ReasoningTokens = x
			}
		case "chunk_offsets_ns":
			if v[0] != '[' {
				return fieldErr(k, "not an array")
			}
			_, err := jsonx.Elements(v, 0, func(_ int, e []byte, _ int) error {
				x, err := parseInt(k, e, 0, math.MaxInt64)
				if err != nil {
					return err
				}
				r.ChunkOffsetsNS = append(r.ChunkOffsetsNS, x)
				return nil
			})
			return err
		case "cancelled", "streamed":
			switch string(v) {
			case "true":
				if k == "cancelled" {
					r.Cancelled = true
				} else {
					r.Streamed = true
				}
			case "false":
			default:
				return fieldErr(k, "not a boolean: %s", clip(v))
			}
		case "run":
			ri, err := parseRun(v)
			if err != nil {
				return err
			}
			r.Run = ri
		case "error":
			if string(v) == "null" {
				return nil
			}
			e, err := parseError(v)
			if err != nil {
				return err
			}
			r.Err = e
		case "usage":
			if string(v) == "null" {
				return nil
			}
			u, err := parseUsage(v)
			if err != nil {
				return err
			}
			r.Usage = u
		case "http":
			if string(v) == "null" {
				return nil
			}
			h, err := parseHTTP(v)
			if err != nil {
				return err
			}
			r.HTTP = h
		}
		return nil
	})
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
	if !haveV {
		return fieldErr("v", "missing (every replay records line carries \"v\":1)")
	}
	if !haveFirstOutput {
		r.FirstOutputNS = r.FirstTokenNS
	}
	return r.checkTimes()
}

// checkTimes refuses times that contradict each other (a garbled or edited
// file): every time of the answer is at or after the send, and the chunks
// are in arrival order.
func (r *Record) checkTimes() error {
	if r.SentNS != 0 {
		for _, t := range []struct {
			field string
			ns    int64
		}{{"first_byte_unix_ns", r.FirstByteNS}, {"first_token_unix_ns", r.FirstTokenNS},
			{"first_output_unix_ns", r.FirstOutputNS}, {"end_unix_ns", r.EndNS}} {
			if t.ns != 0 && t.ns < r.SentNS {
				return fieldErr(t.field, "%d is before sent_unix_ns %d", t.ns, r.SentNS)
			}
		}
	}
	for i := 1; i < len(r.ChunkOffsetsNS); i++ {
		if c, p := r.ChunkOffsetsNS[i], r.ChunkOffsetsNS[i-1]; c < p {
			return fieldErr("chunk_offsets_ns", "%d after %d: not in arrival order", c, p)
		}
	}
	return nil
}

func timeField(r *Record, k string) *int64 {
	switch k {
	case "intended_unix_ns":
		return &r.IntendedNS
	case "sent_unix_ns":
		return &r.SentNS
	case "first_byte_unix_ns":
		return &r.FirstByteNS
	case "first_token_unix_ns":
		return &r.FirstTokenNS
	case "first_output_unix_ns":
		return &r.FirstOutputNS
	default:
		return &r.EndNS
	}
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
		x, err := parseInt("usage."+string(key[1:len(key)-1]), v, 0, math.MaxInt64)
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

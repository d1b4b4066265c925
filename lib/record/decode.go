package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// ErrNoEnd reports a stream that stopped without its end line.
var ErrNoEnd = errors.New("stream ends without its end line {\"v\":1,\"end\":true,...}: the producer was cut short (use --no-end-marker for hand-made streams)")

// Decoder reads records from a JSONL stream.
type Decoder struct {
	r          *bufio.Reader
	name       string
	lineNo     int64
	buf        []byte
	count      uint64
	ended      bool
	RequireEnd bool // when set (the default from NewDecoder), EOF without an end line is an error
}

// NewDecoder reads from r; name is used in error messages.
func NewDecoder(r io.Reader, name string) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 1<<20), name: name, RequireEnd: true}
}

// Count returns the number of records returned so far.
func (d *Decoder) Count() uint64 { return d.count }

// LineNo returns the current input line number.
func (d *Decoder) LineNo() int64 { return d.lineNo }

func (d *Decoder) readLine() ([]byte, error) {
	line, err := d.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		d.buf = append(d.buf[:0], line...)
		for err == bufio.ErrBufferFull {
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

// Next decodes the next record into rec. It returns io.EOF after the end
// line (or at the end of input when RequireEnd is false).
func (d *Decoder) Next(rec *Record) error {
	for {
		if d.ended {
			return io.EOF
		}
		line, err := d.readLine()
		if err == io.EOF {
			if d.RequireEnd {
				return &Error{File: d.name, Line: d.lineNo + 1, Err: ErrNoEnd}
			}
			d.ended = true
			return io.EOF
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", d.name, err)
		}
		d.lineNo++
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		end, n, err := parse(line, rec)
		if err != nil {
			if e, ok := err.(*Error); ok {
				e.File, e.Line = d.name, d.lineNo
				return e
			}
			return &Error{File: d.name, Line: d.lineNo, Err: err}
		}
		if end {
			if n != d.count {
				return &Error{File: d.name, Line: d.lineNo, Field: "records", Err: fmt.Errorf("end line counts %d records, the stream had %d", n, d.count)}
			}
			d.ended = true
			// Anything after the end line is a mistake (two streams concatenated?).
			for {
				rest, err := d.readLine()
				if len(bytes.TrimSpace(rest)) > 0 {
					return &Error{File: d.name, Line: d.lineNo + 1, Err: errors.New("data after the end line")}
				}
				if err != nil {
					break
				}
				d.lineNo++
			}
			return io.EOF
		}
		d.count++
		return nil
	}
}

func fieldErr(field string, format string, args ...any) error {
	return &Error{Field: field, Err: fmt.Errorf(format, args...)}
}

// parse decodes one line. end reports an end line with its record count n.
func parse(line []byte, rec *Record) (end bool, n uint64, err error) {
	*rec = Record{Session: -1}
	i := jsonx.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false, 0, errors.New("not a JSON object")
	}
	var seen uint32
	var haveV, haveLine bool
	var endSeen, recordsSeen bool
	i, err = jsonx.Fields(line, i, func(key, v []byte, _ int) error {
		k := key[1 : len(key)-1] // keys we know need no unescaping
		if bit := fieldBit(k); bit != 0 {
			if seen&bit != 0 {
				return fieldErr(string(k), "appears twice")
			}
			seen |= bit
		}
		switch string(k) {
		case "v":
			x, ok := jsonx.ParseUint(v)
			if !ok {
				return fieldErr("v", "not an integer: %s", clip(v))
			}
			if x != Version {
				return fieldErr("v", "unknown records version %d (this build reads v%d)", x, Version)
			}
			haveV = true
		case "line":
			x, ok := jsonx.ParseUint(v)
			if !ok {
				return fieldErr("line", "not a non-negative integer: %s", clip(v))
			}
			rec.Line, haveLine = x, true
		case "session_id":
			if v[0] != '"' {
				return fieldErr("session_id", "not a string")
			}
			s, err := jsonx.Unquote(v)
			if err != nil {
				return fieldErr("session_id", "%v", err)
			}
			rec.SessionID = s
		case "session":
			x, ok := jsonx.ParseUint(v)
			if !ok || x > math.MaxUint32 {
				return fieldErr("session", "not a session number: %s", clip(v))
			}
			rec.Session = int64(x)
		case "turn":
			x, ok := jsonx.ParseUint(v)
			if !ok || x > math.MaxUint32 {
				return fieldErr("turn", "not a turn number: %s", clip(v))
			}
			rec.Turn = uint32(x)
		case "timestamp_ms":
			x, ok := jsonx.ParseScaled(v, 6)
			if !ok {
				return fieldErr("timestamp_ms", "not a non-negative number of milliseconds: %s", clip(v))
			}
			rec.HasTimestamp, rec.TimestampNS = true, x
		case "delay_ms":
			x, ok := jsonx.ParseScaled(v, 6)
			if !ok {
				return fieldErr("delay_ms", "not a non-negative number of milliseconds: %s", clip(v))
			}
			rec.HasDelay, rec.DelayNS = true, x
		case "input_tokens":
			x, ok := jsonx.ParseUint(v)
			if !ok || x > math.MaxUint32 {
				return fieldErr("input_tokens", "not a token count: %s", clip(v))
			}
			rec.InputTokens = uint32(x)
		case "max_tokens":
			if string(v) == "null" {
				return nil
			}
			x, ok := jsonx.ParseUint(v)
			if !ok || x > math.MaxUint32 {
				return fieldErr("max_tokens", "not a token count: %s", clip(v))
			}
			rec.HasMaxTokens, rec.MaxTokens = true, uint32(x)
		case "prompt":
			if v[0] != '"' {
				return fieldErr("prompt", "not a string")
			}
			return setBody(rec, KindPrompt, v)
		case "messages":
			if v[0] != '[' || isEmptyArray(v) {
				return fieldErr("messages", "not a non-empty array")
			}
			return setBody(rec, KindMessages, v)
		case "payload":
			if v[0] != '{' {
				return fieldErr("payload", "not a JSON object")
			}
			return setBody(rec, KindPayload, v)
		case "tools":
			if v[0] != '[' {
				return fieldErr("tools", "not an array")
			}
			rec.Tools = v
		case "extra":
			if v[0] != '{' {
				return fieldErr("extra", "not a JSON object")
			}
			rec.Extra = v
		case "end":
			if string(v) != "true" {
				return fieldErr("end", "must be true")
			}
			endSeen = true
		case "records":
			x, ok := jsonx.ParseUint(v)
			if !ok {
				return fieldErr("records", "not a count: %s", clip(v))
			}
			n, recordsSeen = x, true
		}
		return nil
	})
	if err != nil {
		var se *jsonx.SyntaxError
		if errors.As(err, &se) {
			return false, 0, fmt.Errorf("malformed JSON: %v", err)
		}
		return false, 0, err
	}
	if jsonx.SkipSpace(line, i) != len(line) {
		return false, 0, fmt.Errorf("malformed JSON: data after the object at byte %d", i)
	}
	if !haveV {
		return false, 0, fieldErr("v", "missing (every records line carries \"v\":1)")
	}
	if endSeen {
		if !recordsSeen {
			return false, 0, fieldErr("records", "missing on the end line")
		}
		return true, n, nil
	}
	if !haveLine {
		return false, 0, fieldErr("line", "missing")
	}
	if rec.Kind == KindNone {
		return false, 0, fieldErr("prompt", "missing: a record needs exactly one of prompt, messages, payload")
	}
	if rec.HasTimestamp && rec.HasDelay {
		return false, 0, fieldErr("delay_ms", "given together with timestamp_ms: use one")
	}
	if rec.Tools != nil && rec.Kind != KindMessages {
		return false, 0, fieldErr("tools", "only allowed with messages")
	}
	if rec.Extra != nil && rec.Kind == KindPayload {
		return false, 0, fieldErr("extra", "not allowed with payload (the payload is sent verbatim)")
	}
	return false, 0, nil
}

// fieldBit numbers the known fields (to catch duplicates); 0 for unknown ones.
func fieldBit(k []byte) uint32 {
	switch string(k) {
	case "v":
		return 1 << 0
	case "line":
		return 1 << 1
	case "session_id":
		return 1 << 2
	case "session":
		return 1 << 3
	case "turn":
		return 1 << 4
	case "timestamp_ms":
		return 1 << 5
	case "delay_ms":
		return 1 << 6
	case "input_tokens":
		return 1 << 7
	case "max_tokens":
		return 1 << 8
	case "prompt":
		return 1 << 9
	case "messages":
		return 1 << 10
	case "payload":
		return 1 << 11
	case "tools":
		return 1 << 12
	case "extra":
		return 1 << 13
	case "end":
		return 1 << 14
	case "records":
		return 1 << 15
	}
	return 0
}

func setBody(rec *Record, k Kind, v []byte) error {
	if rec.Kind != KindNone {
		return fieldErr(k.String(), "given together with %s: a record carries exactly one of prompt, messages, payload", rec.Kind)
	}
	rec.Kind, rec.Raw = k, v
	return nil
}

func isEmptyArray(v []byte) bool {
	return len(bytes.TrimSpace(v[1:len(v)-1])) == 0
}

func clip(v []byte) string {
	if len(v) > 40 {
		return string(v[:40]) + "..."
	}
	return string(v)
}

// Name returns the stream name used in errors.
func (d *Decoder) Name() string { return d.name }

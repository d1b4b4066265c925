package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/aiperf/toolkit/lib/internal/jsonl"
	"github.com/aiperf/toolkit/lib/jsonx"
)

// ErrNoEnd reports a stream that stopped without its end line.
var ErrNoEnd = errors.New("stream ends without its end line {\"v\":1,\"end\":true,...}: the producer was cut short")

// ErrLineTooLong matches (errors.Is) the error for a line longer than the
// decoder's MaxLine.
var ErrLineTooLong = jsonl.ErrLineTooLong

// DefaultMaxLine is the longest line a Decoder accepts unless told
// otherwise: far above any real request body (a 1M-token prompt is about
// 4 MB of JSON), low enough that a stream without newlines fails before it
// exhausts memory.
const DefaultMaxLine = jsonl.DefaultMaxLine

// Decoder reads records from a JSONL stream. Its memory is the longest line
// so far plus a 1 MiB read buffer.
type Decoder struct {
	r          io.Reader
	lr         *jsonl.Reader // made at the first Next, when MaxLine is known
	name       string
	count      uint64
	ended      bool
	settings   string // the end line's
	RequireEnd bool   // when set (the default from NewDecoder), EOF without an end line is an error
	MaxLine    int    // the longest line accepted, newline excluded; 0 means DefaultMaxLine

	blocks []uint32 // the block numbers defined so far, increasing
	lit    []byte   // the literal bytes of the current record's pieces
	marks  []mark
	ps     []Piece
}

// NewDecoder reads from r; name is used in error messages.
func NewDecoder(r io.Reader, name string) *Decoder {
	return &Decoder{r: r, name: name, RequireEnd: true}
}

// Count returns the number of records returned so far.
func (d *Decoder) Count() uint64 { return d.count }

// LineNo returns the current input line number.
func (d *Decoder) LineNo() int64 {
	if d.lr == nil {
		return 0
	}
	return d.lr.Line()
}

// Settings returns the "settings" of the stream's end line ("" when it has
// none, or before the end): the producer's description of the settings
// that shaped the records (see [Encoder.Settings]).
func (d *Decoder) Settings() string { return d.settings }

// Name returns the stream name used in errors.
func (d *Decoder) Name() string { return d.name }

// Next decodes the next record into rec. It returns io.EOF after the end
// line (or at the end of input when RequireEnd is false).
func (d *Decoder) Next(rec *Record) error {
	if d.ended {
		return io.EOF
	}
	if d.lr == nil {
		d.lr = jsonl.NewReaderSize(d.r, 1<<20, d.MaxLine)
	}
	line, n, err := d.lr.Record()
	if err == io.EOF {
		if d.RequireEnd {
			return &Error{File: d.name, Line: n + 1, Err: ErrNoEnd}
		}
		d.ended = true
		return io.EOF
	}
	if err != nil {
		return d.readErr(n, err)
	}
	end, count, settings, err := parse(line, rec)
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.File, e.Line = d.name, n
			return e
		}
		return &Error{File: d.name, Line: n, Err: err}
	}
	if end {
		d.settings = settings
		return d.end(count)
	}
	switch rec.Kind {
	case KindBlock:
		if err := d.defineBlock(rec.Block); err != nil {
			return d.place(err, n)
		}
		return nil
	case KindBlockMessages:
		if err := d.pieces(rec); err != nil {
			return d.place(err, n)
		}
	}
	d.count++
	return nil
}

func (d *Decoder) place(err error, n int64) error {
	if e, ok := err.(*Error); ok {
		e.File, e.Line = d.name, n
		return e
	}
	return &Error{File: d.name, Line: n, Err: err}
}

// readErr places an error of the line reader: a line too long at line n,
// any other as a read error of the stream.
func (d *Decoder) readErr(n int64, err error) error {
	var tl *jsonl.LineTooLongError
	if errors.As(err, &tl) {
		return &Error{File: d.name, Line: n, Err: fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, tl.Max)}
	}
	return fmt.Errorf("read %s: %w", d.name, err)
}

// end checks the end line's count and that nothing but blank lines follows.
func (d *Decoder) end(n uint64) error {
	if n != d.count {
		return &Error{File: d.name, Line: d.lr.Line(), Field: "records", Err: fmt.Errorf("end line counts %d records, the stream had %d", n, d.count)}
	}
	d.ended = true
	// Anything after the end line is a mistake (two streams concatenated?).
	if err := d.lr.AfterEnd(d.name); err != nil {
		if e, ok := err.(*Error); ok && !errors.Is(e, ErrLineTooLong) {
			return e
		} else if ok {
			return d.readErr(e.Line, e.Err)
		}
		return d.readErr(d.lr.Line(), err)
	}
	return io.EOF
}

func fieldErr(field string, format string, args ...any) error {
	return &Error{Field: field, Err: fmt.Errorf(format, args...)}
}

// parse decodes one line into rec. end reports an end line with its record
// count n and its settings.
func parse(line []byte, rec *Record) (end bool, n uint64, settings string, err error) {
	ids := rec.HashIDs[:0] // reused from the previous line
	*rec = Record{Session: -1}
	i := jsonx.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false, 0, "", errors.New("not a JSON object")
	}
	p := lineParser{rec: rec, ids: ids}
	i, err = jsonx.Fields(line, i, p.field)
	if err != nil {
		var se *jsonx.SyntaxError
		if errors.As(err, &se) {
			return false, 0, "", fmt.Errorf("malformed JSON: %v", err)
		}
		return false, 0, "", err
	}
	if jsonx.SkipSpace(line, i) != len(line) {
		return false, 0, "", fmt.Errorf("malformed JSON: data after the object at byte %d", i)
	}
	end, n, err = p.finish()
	if end && err == nil && p.settings != nil {
		if settings, err = stringField("settings", p.settings); err != nil {
			return false, 0, "", err
		}
	}
	return end, n, settings, err
}

// lineParser collects the fields of one line.
type lineParser struct {
	rec         *Record
	seen        uint32 // fieldBit of every known field so far
	haveV       bool
	haveLine    bool
	end         bool
	haveRecords bool
	records     uint64
	settings    []byte // raw; read on the end line only
	ids         []uint64
	blockV      []byte // a block line's block and text, raw
	text        []byte
}

// field decodes one member. Keys we know need no unescaping, so they are
// compared raw.
func (p *lineParser) field(key, v []byte, _ int) error {
	k := key[1 : len(key)-1]
	if bit := fieldBit(k); bit != 0 {
		if p.seen&bit != 0 {
			return fieldErr(string(k), "appears twice")
		}
		p.seen |= bit
	}
	rec := p.rec
	var err error
	switch string(k) {
	case "v":
		err = checkVersion(v)
		p.haveV = true
	case "line":
		rec.Line, err = uintField("line", v, math.MaxUint64, "not a non-negative integer")
		p.haveLine = true
	case "session_id":
		rec.SessionID, err = stringField("session_id", v)
	case "session":
		var x uint64
		x, err = uintField("session", v, math.MaxUint32, "not a session number")
		rec.Session = int64(x)
	case "turn":
		rec.Turn, err = u32Field("turn", v, "not a turn number")
	case "timestamp_ms":
		rec.TimestampNS, err = millisField("timestamp_ms", v)
		rec.HasTimestamp = true
	case "delay_ms":
		rec.DelayNS, err = millisField("delay_ms", v)
		rec.HasDelay = true
	case "input_tokens":
		rec.InputTokens, err = u32Field("input_tokens", v, "not a token count")
	case "max_tokens":
		if string(v) != "null" {
			rec.MaxTokens, err = u32Field("max_tokens", v, "not a token count")
			rec.HasMaxTokens = true
		}
	case "block":
		p.blockV = v
	case "text":
		p.text = v
	case "prompt", "messages", "payload", "block_messages":
		err = setBody(rec, v, k)
	case "tools":
		rec.Tools, err = containerField("tools", v, '[', "not an array")
	case "extra":
		rec.Extra, err = containerField("extra", v, '{', "not a JSON object")
	case "context_mode":
		rec.ContextMode, err = stringField("context_mode", v)
		if err == nil && rec.ContextMode != ContextDeltas && rec.ContextMode != ContextMessageArray {
			err = fieldErr("context_mode", "must be %q or %q, got %q", ContextDeltas, ContextMessageArray, clip([]byte(rec.ContextMode)))
		}
	case "model", "parent_session", "agent", "spawn_turn", "join_turn", "api_time_ms", "think_time_ms":
		err = treeField(rec, string(k), v)
	case "end":
		if string(v) != "true" {
			err = fieldErr("end", "must be true")
		}
		p.end = true
	case "records":
		p.records, err = uintField("records", v, math.MaxUint64, "not a count")
		p.haveRecords = true
	case "settings":
		p.settings = v
	case "hash_ids":
		rec.HashIDs, err = hashIDsField(p.ids[:0], v)
		p.ids = rec.HashIDs
	case "block_size":
		rec.BlockSize, err = u32Field("block_size", v, "not a block size")
		if err == nil && rec.BlockSize == 0 {
			err = fieldErr("block_size", "must be positive")
		}
	}
	return err
}

// hashIDsField parses an array of unsigned 64-bit integers into dst.
func hashIDsField(dst []uint64, v []byte) ([]uint64, error) {
	if v[0] != '[' {
		return nil, fieldErr("hash_ids", "not an array")
	}
	_, err := jsonx.Elements(v, 0, func(n int, e []byte, _ int) error {
		id, ok := jsonx.ParseUint(e)
		if !ok {
			return fieldErr(fmt.Sprintf("hash_ids[%d]", n), "not an unsigned 64-bit integer: %s", clip(e))
		}
		dst = append(dst, id)
		return nil
	})
	return dst, err
}

// finish checks the line as a whole once every field is in.
func (p *lineParser) finish() (end bool, n uint64, err error) {
	rec := p.rec
	switch {
	case !p.haveV:
		return false, 0, fieldErr("v", "missing (every records line carries \"v\":1)")
	case p.end && !p.haveRecords:
		return false, 0, fieldErr("records", "missing on the end line")
	case p.end:
		return true, p.records, nil
	case p.blockV != nil || p.text != nil:
		return false, 0, p.blockLine()
	case !p.haveLine:
		return false, 0, fieldErr("line", "missing")
	case rec.Kind == KindNone:
		return false, 0, fieldErr("prompt", "missing: a record needs exactly one of prompt, messages, payload, block_messages")
	case rec.HasTimestamp && rec.HasDelay:
		return false, 0, fieldErr("delay_ms", "given together with timestamp_ms: use one")
	case rec.Tools != nil && rec.Kind != KindMessages && rec.Kind != KindBlockMessages:
		return false, 0, fieldErr("tools", "only allowed with messages")
	case rec.Extra != nil && rec.Kind == KindPayload:
		return false, 0, fieldErr("extra", "not allowed with payload (the payload is sent verbatim)")
	case rec.ContextMode == ContextDeltas && rec.Kind == KindPayload:
		return false, 0, fieldErr("context_mode", "%q is not allowed with payload (the payload is sent verbatim)", ContextDeltas)
	case len(rec.HashIDs) > 0 && rec.BlockSize == 0:
		return false, 0, fieldErr("block_size", "missing: hash_ids need the block size they were recorded with")
	case len(rec.HashIDs) == 0 && rec.BlockSize != 0:
		return false, 0, fieldErr("hash_ids", "missing or empty, but block_size is given")
	}
	return false, 0, nil
}

func checkVersion(v []byte) error {
	x, ok := jsonx.ParseUint(v)
	if !ok {
		return fieldErr("v", "not an integer: %s", clip(v))
	}
	if x != Version {
		return fieldErr("v", "unknown records version %d (this build reads v%d)", x, Version)
	}
	return nil
}

// uintField parses a non-negative integer of at most max.
func uintField(name string, v []byte, max uint64, what string) (uint64, error) {
	x, ok := jsonx.ParseUint(v)
	if !ok || x > max {
		return 0, fieldErr(name, "%s: %s", what, clip(v))
	}
	return x, nil
}

func u32Field(name string, v []byte, what string) (uint32, error) {
	x, err := uintField(name, v, math.MaxUint32, what)
	return uint32(x), err
}

// millisField parses decimal milliseconds into nanoseconds, exactly.
func millisField(name string, v []byte) (int64, error) {
	x, ok := jsonx.ParseScaled(v, 6)
	if !ok {
		return 0, fieldErr(name, "not a non-negative number of milliseconds: %s", clip(v))
	}
	return x, nil
}

func stringField(name string, v []byte) (string, error) {
	if v[0] != '"' {
		return "", fieldErr(name, "not a string")
	}
	s, err := jsonx.Unquote(v)
	if err != nil {
		return "", fieldErr(name, "%v", err)
	}
	return s, nil
}

// containerField checks that v is an array or object (by its first byte)
// and returns it raw.
func containerField(name string, v []byte, open byte, what string) ([]byte, error) {
	if v[0] != open {
		return nil, fieldErr(name, "%s", what)
	}
	return v, nil
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
	case "context_mode":
		return 1 << 16
	case "settings":
		return 1 << 17
	case "hash_ids":
		return 1 << 18
	case "block_size":
		return 1 << 19
	case "model":
		return 1 << 20
	case "parent_session":
		return 1 << 21
	case "agent":
		return 1 << 22
	case "spawn_turn":
		return 1 << 23
	case "join_turn":
		return 1 << 24
	case "api_time_ms":
		return 1 << 25
	case "think_time_ms":
		return 1 << 26
	case "block":
		return 1 << 27
	case "text":
		return 1 << 28
	case "block_messages":
		return 1 << 29
	}
	return 0
}

// setBody records the body field k (prompt, messages or payload).
func setBody(rec *Record, v, k []byte) error {
	var kind Kind
	switch string(k) {
	case "prompt":
		if v[0] != '"' {
			return fieldErr("prompt", "not a string")
		}
		kind = KindPrompt
	case "messages":
		if v[0] != '[' || isEmptyArray(v) {
			return fieldErr("messages", "not a non-empty array")
		}
		kind = KindMessages
	case "payload":
		if v[0] != '{' {
			return fieldErr("payload", "not a JSON object")
		}
		kind = KindPayload
	case "block_messages":
		if v[0] != '[' || isEmptyArray(v) {
			return fieldErr("block_messages", "not a non-empty array")
		}
		kind = KindBlockMessages
	}
	if rec.Kind != KindNone {
		return fieldErr(kind.String(), "given together with %s: a record carries exactly one of prompt, messages, payload, block_messages", rec.Kind)
	}
	rec.Kind, rec.Raw = kind, v
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

// treeField decodes one member of an agentic record's Tree.
func treeField(rec *Record, k string, v []byte) error {
	if rec.Tree == nil {
		rec.Tree = &Tree{SpawnTurn: -1, JoinTurn: -1}
	}
	t := rec.Tree
	var err error
	switch k {
	case "model":
		t.Model, err = stringField(k, v)
	case "parent_session":
		t.ParentSession, err = stringField(k, v)
	case "agent":
		t.Agent, err = stringField(k, v)
	case "spawn_turn", "join_turn":
		var x uint64
		if string(v) == "-1" {
			x = math.MaxUint64
		} else if x, err = uintField(k, v, math.MaxUint32, "not a turn number (or -1)"); err != nil {
			return err
		}
		n := int64(-1)
		if x != math.MaxUint64 {
			n = int64(x)
		}
		if k == "spawn_turn" {
			t.SpawnTurn = n
		} else {
			t.JoinTurn = n
		}
	case "api_time_ms":
		t.APITimeNS, err = millisField(k, v)
		t.HasAPITime = true
	case "think_time_ms":
		t.ThinkTimeNS, err = millisField(k, v)
		t.HasThinkTime = true
	}
	return err
}

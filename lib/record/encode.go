package record

import (
	"bufio"
	"io"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// Encoder writes records JSONL. Call End to write the end line; Flush is
// implied by End.
type Encoder struct {
	w     *bufio.Writer
	buf   []byte
	count uint64
	// Settings, when set, goes on the end line as "settings": the
	// producer's description of the settings that shaped the records
	// (aiperf-tokenize's part of a cache key's description), which
	// aiperf-pack carries into the store.
	Settings string
}

// NewEncoder writes to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: bufio.NewWriterSize(w, 1<<20)}
}

// Count returns the number of records written.
func (e *Encoder) Count() uint64 { return e.count }

// bigBody is the body size from which Encode writes the body straight to
// the writer rather than building the whole line first (which would hold a
// second copy of a huge body).
const bigBody = 64 << 10

// Encode writes one record. rec.Raw must hold a valid JSON value of rec.Kind
// (for KindPrompt, a string literal: see AppendPrompt).
func (e *Encoder) Encode(rec *Record) error {
	e.count++
	if len(rec.Raw) < bigBody {
		e.buf = Append(e.buf[:0], rec)
		_, err := e.w.Write(e.buf)
		return err
	}
	e.buf = appendHead(e.buf[:0], rec)
	if _, err := e.w.Write(e.buf); err != nil {
		return err
	}
	if _, err := e.w.Write(rec.Raw); err != nil {
		return err
	}
	e.buf = appendTail(e.buf[:0], rec)
	_, err := e.w.Write(e.buf)
	return err
}

// Append appends the JSONL line of rec (with its newline) to dst.
func Append(dst []byte, rec *Record) []byte {
	dst = appendHead(dst, rec)
	if rec.Kind != KindNone {
		dst = append(dst, rec.Raw...)
	}
	return appendTail(dst, rec)
}

// appendHead appends the line of rec up to its body (the body's key
// included).
func appendHead(dst []byte, rec *Record) []byte {
	dst = append(dst, `{"v":1,"line":`...)
	dst = strconv.AppendUint(dst, rec.Line, 10)
	if rec.SessionID != "" {
		dst = append(dst, `,"session_id":`...)
		dst = jsonx.AppendString(dst, rec.SessionID)
	}
	if rec.Session >= 0 {
		dst = append(dst, `,"session":`...)
		dst = strconv.AppendInt(dst, rec.Session, 10)
	}
	dst = append(dst, `,"turn":`...)
	dst = strconv.AppendUint(dst, uint64(rec.Turn), 10)
	if rec.HasTimestamp {
		dst = append(dst, `,"timestamp_ms":`...)
		dst = jsonx.AppendScaled(dst, rec.TimestampNS, 6)
	}
	if rec.HasDelay {
		dst = append(dst, `,"delay_ms":`...)
		dst = jsonx.AppendScaled(dst, rec.DelayNS, 6)
	}
	if rec.InputTokens > 0 {
		dst = append(dst, `,"input_tokens":`...)
		dst = strconv.AppendUint(dst, uint64(rec.InputTokens), 10)
	}
	if rec.HasMaxTokens {
		dst = append(dst, `,"max_tokens":`...)
		dst = strconv.AppendUint(dst, uint64(rec.MaxTokens), 10)
	}
	if rec.ContextMode != "" {
		dst = append(dst, `,"context_mode":`...)
		dst = jsonx.AppendString(dst, rec.ContextMode)
	}
	if rec.Tree != nil {
		dst = appendTree(dst, rec.Tree)
	}
	if rec.Kind != KindNone {
		dst = append(dst, `,"`...)
		dst = append(dst, rec.Kind.String()...)
		dst = append(dst, `":`...)
	}
	return dst
}

// appendTail appends the line of rec after its body.
func appendTail(dst []byte, rec *Record) []byte {
	if rec.Tools != nil {
		dst = append(dst, `,"tools":`...)
		dst = append(dst, rec.Tools...)
	}
	if rec.Extra != nil {
		dst = append(dst, `,"extra":`...)
		dst = append(dst, rec.Extra...)
	}
	if len(rec.HashIDs) > 0 {
		dst = append(dst, `,"block_size":`...)
		dst = strconv.AppendUint(dst, uint64(rec.BlockSize), 10)
		dst = append(dst, `,"hash_ids":[`...)
		for i, id := range rec.HashIDs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendUint(dst, id, 10)
		}
		dst = append(dst, ']')
	}
	return append(dst, "}\n"...)
}

// End writes the end line and flushes.
func (e *Encoder) End() error {
	b := append(e.buf[:0], `{"v":1,"end":true,"records":`...)
	b = strconv.AppendUint(b, e.count, 10)
	if e.Settings != "" {
		b = append(b, `,"settings":`...)
		b = jsonx.AppendString(b, e.Settings)
	}
	b = append(b, "}\n"...)
	if _, err := e.w.Write(b); err != nil {
		return err
	}
	return e.w.Flush()
}

// Flush flushes buffered lines without ending the stream.
func (e *Encoder) Flush() error { return e.w.Flush() }

func appendTree(dst []byte, t *Tree) []byte {
	if t.Model != "" {
		dst = append(dst, `,"model":`...)
		dst = jsonx.AppendString(dst, t.Model)
	}
	if t.ParentSession != "" {
		dst = append(dst, `,"parent_session":`...)
		dst = jsonx.AppendString(dst, t.ParentSession)
		dst = append(dst, `,"spawn_turn":`...)
		dst = strconv.AppendInt(dst, t.SpawnTurn, 10)
		if t.JoinTurn >= 0 {
			dst = append(dst, `,"join_turn":`...)
			dst = strconv.AppendInt(dst, t.JoinTurn, 10)
		}
	}
	if t.Agent != "" {
		dst = append(dst, `,"agent":`...)
		dst = jsonx.AppendString(dst, t.Agent)
	}
	if t.HasAPITime {
		dst = append(dst, `,"api_time_ms":`...)
		dst = jsonx.AppendScaled(dst, t.APITimeNS, 6)
	}
	if t.HasThinkTime {
		dst = append(dst, `,"think_time_ms":`...)
		dst = jsonx.AppendScaled(dst, t.ThinkTimeNS, 6)
	}
	return dst
}

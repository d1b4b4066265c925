package trace

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// Mooncake input modes; a session may not mix them (aiperf JUL26+).
const (
	modeSynth    = 1 + iota // input_length or text_input: prompt built by the client
	modeMessages            // verbatim messages
	modePayload             // verbatim request body
)

var modeNames = [...]string{modeSynth: "input_length/text_input", modeMessages: "messages", modePayload: "payload"}

// mooncakeDecoder streams a Mooncake JSONL trace.
type mooncakeDecoder struct {
	name     string
	lr       *lineReader
	filt     *filter
	seq      int64
	sessions map[string]*sessionState
}

type sessionState struct {
	turns int
	mode  int
	ctx   string // the session's context mode (Row.ContextMode)
	// ctxLine is the line of the row that set ctx, and ctxField the field
	// it came from ("context_mode", "message_mode" or "" when inferred).
	ctxLine  int64
	ctxField string
}

func newMooncakeDecoder(name string, lr *lineReader, filt *filter) *mooncakeDecoder {
	return &mooncakeDecoder{name: name, lr: lr, filt: filt, sessions: make(map[string]*sessionState)}
}

func (d *mooncakeDecoder) next() (*Row, error) {
	for {
		rec, line, err := d.lr.Record()
		if err != nil {
			return nil, ioError(d.name, line, err)
		}
		seq := d.seq
		d.seq++
		row, mode, ctxField, err := parseMooncake(rec, d.lr.Take)
		if err != nil {
			return nil, at(d.name, line, err)
		}
		row.Source, row.Line, row.Seq = d.name, line, seq
		if !d.filt.keep(row) {
			continue
		}
		if row.SessionID != "" {
			st := d.sessions[row.SessionID]
			if st == nil {
				st = &sessionState{mode: mode, ctx: row.ContextMode, ctxLine: line, ctxField: ctxField}
				d.sessions[row.SessionID] = st
			} else if st.mode != mode {
				return nil, at(d.name, line, ferr("session_id",
					"session %q mixes %s rows with %s rows; a session must use one input mode",
					row.SessionID, modeNames[st.mode], modeNames[mode]))
			} else if st.ctx != row.ContextMode {
				return nil, at(d.name, line, mixedContext(row, ctxField, st))
			}
			row.Turn = st.turns
			st.turns++
		}
		return row, nil
	}
}

// mixedContext is the error for a row whose context mode differs from its
// session's, naming the field that said so (or the input, when the mode
// was inferred from it).
func mixedContext(row *Row, field string, st *sessionState) *fieldError {
	say := func(ctx, field string) string {
		if ctx == "" {
			ctx = "none"
		}
		if field == "" {
			return fmt.Sprintf("%s (from its %s input)", ctx, modeNames[st.mode])
		}
		return fmt.Sprintf("%s (from %s)", ctx, field)
	}
	at := field // the field to blame: this row's, else the one that set the session's mode
	if at == "" {
		at = st.ctxField
	}
	if at == "" {
		at = "context_mode"
	}
	return ferr(at, "session %q is %s here but %s on line %d; every row of a session must have the same context mode",
		row.SessionID, say(row.ContextMode, field), say(st.ctx, st.ctxField), st.ctxLine)
}

// parseMooncake validates one Mooncake record (aiperf's MooncakeTrace model)
// and returns its row, its input mode and the field its context mode came
// from ("" when inferred). take makes a verbatim value the row's own
// (copyRaw, or a lineReader's take).
func parseMooncake(rec []byte, take func([]byte) []byte) (*Row, int, string, error) {
	if err := checkObject(rec); err != nil {
		return nil, 0, "", err
	}
	var f mooncakeFields
	f.collect(rec)
	mode, fe := f.inputMode()
	if fe != nil {
		return nil, 0, "", fe
	}
	row := new(Row)
	for _, step := range []func(*Row, func([]byte) []byte) *fieldError{f.input, f.readMessageMode, f.schedule} {
		if fe := step(row, take); fe != nil {
			return nil, 0, "", fe
		}
	}
	field, fe := f.readContextMode(row, mode)
	if fe != nil {
		return nil, 0, "", fe
	}
	return row, mode, field, nil
}

// contextModes are the Python aiperf's ConversationContextMode values, with
// why this toolkit does not take the ones it refuses ("" when it does).
var contextModes = []struct{ name, refused string }{
	{ContextDeltas, ""},
	{ContextMessageArray, ""},
	{"deltas_with_responses", "it accumulates the trace's turns without the server's replies, which neither aiperf-tokenize nor aiperf-replay does yet"},
	{"message_array_without_responses", "the Python aiperf does not implement it either"},
}

// readContextMode sets the row's context mode: context_mode when given
// (the Python aiperf's enum, read case-insensitively as its
// CaseInsensitiveStrEnum is), else the one the Python aiperf infers for a
// mooncake session: deltas for message_mode "delta", the message array for
// messages and payload rows, none for synthesized prompts. field is where
// the mode came from ("" when inferred).
func (f *mooncakeFields) readContextMode(row *Row, mode int) (field string, fe *fieldError) {
	inferred := ""
	switch {
	case row.DeltaMessages:
		inferred, field = ContextDeltas, "message_mode"
	case mode == modeMessages || mode == modePayload:
		inferred = ContextMessageArray
	}
	if f.contextMode == nil {
		row.ContextMode = inferred
		return field, nil
	}
	s, fe := stringValue("context_mode", f.contextMode)
	if fe != nil {
		return "", fe
	}
	name := strings.ToLower(s)
	known := false
	for _, m := range contextModes {
		if m.name != name {
			continue
		}
		if m.refused != "" {
			return "", ferr("context_mode", "%q is not supported: %s", s, m.refused)
		}
		known = true
	}
	if !known {
		return "", ferr("context_mode", "must be %s or %s, got %q", ContextDeltas, ContextMessageArray, s)
	}
	switch {
	case row.DeltaMessages && name != ContextDeltas:
		return "", ferr("context_mode", "%q contradicts message_mode \"delta\" (which is %s)", s, ContextDeltas)
	case mode == modePayload && name == ContextDeltas:
		return "", ferr("context_mode", "%q is not allowed with payload: a verbatim body is sent as it came", s)
	}
	row.ContextMode = name
	return "context_mode", nil
}

// mooncakeFields holds the raw values of a Mooncake record's fields (nil
// when absent or null: null is the same as absent for every optional field).
type mooncakeFields struct {
	inputLength, textInput, messages, payload, tools, hashes []byte
	messageMode, timestamp, delay, outputLength, extra       []byte
	sessionID, contextMode                                   []byte
}

func (f *mooncakeFields) collect(rec []byte) {
	_ = members(rec, func(k string, v []byte, _ int) error {
		if isNull(v) {
			v = nil
		}
		switch k {
		case "input_length":
			f.inputLength = v
		case "text_input":
			f.textInput = v
		case "messages":
			f.messages = v
		case "payload":
			f.payload = v
		case "tools":
			f.tools = v
		case "hash_ids":
			f.hashes = v
		case "timestamp":
			f.timestamp = v
		case "delay":
			f.delay = v
		case "output_length":
			f.outputLength = v
		case "session_id":
			f.sessionID = v
		case "extra":
			f.extra = v
		case "message_mode":
			f.messageMode = v
		case "context_mode":
			f.contextMode = v
		}
		return nil
	})
}

// inputMode checks that exactly one input is given, with the fields that
// may go with it, and names the mode.
func (f *mooncakeFields) inputMode() (int, *fieldError) {
	var present []string
	for _, m := range []struct {
		name string
		v    []byte
	}{{"input_length", f.inputLength}, {"text_input", f.textInput}, {"messages", f.messages}, {"payload", f.payload}} {
		if m.v != nil {
			present = append(present, m.name)
		}
	}
	switch len(present) {
	case 0:
		return 0, ferr("", "exactly one of input_length, text_input, messages or payload must be provided")
	case 1:
	default:
		return 0, ferr(present[1], "input_length, text_input, messages and payload are mutually exclusive (found %s)",
			strings.Join(present, " and "))
	}
	if f.hashes != nil && f.inputLength == nil {
		return 0, ferr("hash_ids", "only allowed with input_length, not with %s", present[0])
	}
	if f.tools != nil && f.messages == nil {
		return 0, ferr("tools", "only allowed with messages")
	}
	switch {
	case f.messages != nil:
		return modeMessages, nil
	case f.payload != nil:
		return modePayload, nil
	}
	return modeSynth, nil
}

// input reads the row's one input: input_length (+ hash_ids), text_input,
// messages (+ tools) or payload.
func (f *mooncakeFields) input(row *Row, take func([]byte) []byte) *fieldError {
	var fe *fieldError
	switch {
	case f.inputLength != nil:
		if row.InputLength, fe = tokens("input_length", f.inputLength); fe != nil {
			return fe
		}
		if row.InputLength == 0 {
			return ferr("input_length", "must be greater than 0")
		}
		if f.hashes != nil {
			row.HashIDs, fe = hashIDs("hash_ids", f.hashes)
		}
		return fe
	case f.textInput != nil:
		row.Text, fe = stringValue("text_input", f.textInput)
		row.HasText = fe == nil
		return fe
	case f.messages != nil:
		if fe = validateMessages("messages", f.messages); fe != nil {
			return fe
		}
		if f.tools != nil {
			n, fe := objectList("tools", f.tools)
			if fe != nil {
				return fe
			}
			if n == 0 {
				return ferr("tools", "must be a non-empty array")
			}
			row.Tools = copyRaw(f.tools)
		}
		row.Messages = take(f.messages)
		return nil
	}
	if kind(f.payload) != kindObject {
		return wrongKind("payload", "a non-empty object", f.payload)
	}
	if !hasAnyMember(f.payload) {
		return ferr("payload", "must be a non-empty object")
	}
	row.Payload = take(f.payload)
	return nil
}

// readMessageMode reads message_mode: "history" (the default) or "delta".
func (f *mooncakeFields) readMessageMode(row *Row, _ func([]byte) []byte) *fieldError {
	if f.messageMode == nil {
		return nil
	}
	mm, fe := stringValue("message_mode", f.messageMode)
	if fe != nil {
		return fe
	}
	switch mm {
	case "history":
	case "delta":
		if f.messages == nil {
			// The Python aiperf refuses it too: a delta is a list of new
			// messages. Synthesized and text prompts accumulate with
			// context_mode.
			return ferr("message_mode", "\"delta\" is only supported with messages, as in the Python aiperf; for input_length and text_input rows whose turns accumulate, give context_mode %q", ContextDeltas)
		}
		if f.extra != nil && kind(f.extra) == kindObject && hasMember(f.extra, "messages") {
			return ferr("extra.messages", "not allowed with message_mode \"delta\"")
		}
		row.DeltaMessages = true
	default:
		return ferr("message_mode", "must be \"history\" or \"delta\", got %q", mm)
	}
	return nil
}

// schedule reads the fields around the input: timestamp or delay,
// output_length, session_id and extra.
func (f *mooncakeFields) schedule(row *Row, _ func([]byte) []byte) *fieldError {
	var fe *fieldError
	if fe = timing(row, f.timestamp, f.delay, scaleMS); fe != nil {
		return fe
	}
	if f.outputLength != nil {
		if row.OutputLength, fe = tokens("output_length", f.outputLength); fe != nil {
			return fe
		}
		row.HasOutputLength = true
	}
	if f.sessionID != nil {
		if row.SessionID, fe = stringValue("session_id", f.sessionID); fe != nil {
			return fe
		}
	}
	if f.extra != nil {
		row.Extra, fe = extraObject("extra", f.extra)
	}
	return fe
}

// checkObject reports a record that is not a valid JSON object (or whose
// text is not valid Unicode, see checkText).
func checkObject(rec []byte) error {
	if fe, _ := checkText(rec); fe != nil {
		return fe
	}
	if k := kind(rec); k != kindObject {
		return ferr("", "record must be a JSON object, got %s", k)
	}
	return nil
}

func hasAnyMember(obj []byte) bool {
	i := jsonx.SkipSpace(obj, 1)
	return i < len(obj) && obj[i] != '}'
}

// timing sets the row's timestamp and delay from their raw values (nil when
// absent) in units of 10^-scale s.
func timing(row *Row, timestamp, delay []byte, scale int) *fieldError {
	var fe *fieldError
	if timestamp != nil {
		if row.TimestampNS, fe = durationNS("timestamp", timestamp, scale); fe != nil {
			return fe
		}
		row.HasTimestamp = true
	}
	if delay != nil {
		if row.DelayNS, fe = durationNS("delay", delay, scale); fe != nil {
			return fe
		}
		row.HasDelay = true
	}
	return nil
}

func extraObject(field string, v []byte) (json.RawMessage, *fieldError) {
	if kind(v) != kindObject {
		return nil, wrongKind(field, "an object", v)
	}
	return copyRaw(v), nil
}

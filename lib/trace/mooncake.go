package trace

import (
	"encoding/json"
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
}

func newMooncakeDecoder(name string, lr *lineReader, filt *filter) *mooncakeDecoder {
	return &mooncakeDecoder{name: name, lr: lr, filt: filt, sessions: make(map[string]*sessionState)}
}

func (d *mooncakeDecoder) next() (*Row, error) {
	for {
		rec, line, err := d.lr.record()
		if err != nil {
			return nil, ioError(d.name, line, err)
		}
		seq := d.seq
		d.seq++
		row, mode, err := parseMooncake(rec)
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
				st = &sessionState{mode: mode}
				d.sessions[row.SessionID] = st
			} else if st.mode != mode {
				return nil, at(d.name, line, ferr("session_id",
					"session %q mixes %s rows with %s rows; a session must use one input mode",
					row.SessionID, modeNames[st.mode], modeNames[mode]))
			}
			row.Turn = st.turns
			st.turns++
		}
		return row, nil
	}
}

// parseMooncake validates one Mooncake record (aiperf's MooncakeTrace model)
// and returns its row and input mode.
func parseMooncake(rec []byte) (*Row, int, error) {
	if err := checkObject(rec); err != nil {
		return nil, 0, err
	}
	var (
		row                                  = new(Row)
		inputLength, textInput, messages     []byte
		payload, tools, hashes, messageMode  []byte
		timestamp, delay, outputLength, extr []byte
		sessionID                            []byte
	)
	_ = members(rec, func(k string, v []byte, _ int) error {
		if isNull(v) {
			v = nil // null is the same as absent for every optional field
		}
		switch k {
		case "input_length":
			inputLength = v
		case "text_input":
			textInput = v
		case "messages":
			messages = v
		case "payload":
			payload = v
		case "tools":
			tools = v
		case "hash_ids":
			hashes = v
		case "timestamp":
			timestamp = v
		case "delay":
			delay = v
		case "output_length":
			outputLength = v
		case "session_id":
			sessionID = v
		case "extra":
			extr = v
		case "message_mode":
			messageMode = v
		}
		return nil
	})

	// Exactly one input mode.
	var present []string
	for _, m := range []struct {
		name string
		v    []byte
	}{{"input_length", inputLength}, {"text_input", textInput}, {"messages", messages}, {"payload", payload}} {
		if m.v != nil {
			present = append(present, m.name)
		}
	}
	switch len(present) {
	case 0:
		return nil, 0, ferr("", "exactly one of input_length, text_input, messages or payload must be provided")
	case 1:
	default:
		return nil, 0, ferr(present[1], "input_length, text_input, messages and payload are mutually exclusive (found %s)",
			strings.Join(present, " and "))
	}
	if hashes != nil && inputLength == nil {
		return nil, 0, ferr("hash_ids", "only allowed with input_length, not with %s", present[0])
	}
	if tools != nil && messages == nil {
		return nil, 0, ferr("tools", "only allowed with messages")
	}

	mode := modeSynth
	var fe *fieldError
	switch {
	case inputLength != nil:
		if row.InputLength, fe = count("input_length", inputLength); fe != nil {
			return nil, 0, fe
		}
		if row.InputLength == 0 {
			return nil, 0, ferr("input_length", "must be greater than 0")
		}
		if hashes != nil {
			if row.HashIDs, fe = hashIDs("hash_ids", hashes); fe != nil {
				return nil, 0, fe
			}
		}
	case textInput != nil:
		if row.Text, fe = stringValue("text_input", textInput); fe != nil {
			return nil, 0, fe
		}
		row.HasText = true
	case messages != nil:
		mode = modeMessages
		if fe = validateMessages("messages", messages); fe != nil {
			return nil, 0, fe
		}
		row.Messages = copyRaw(messages)
		if tools != nil {
			n, fe := objectList("tools", tools)
			if fe != nil {
				return nil, 0, fe
			}
			if n == 0 {
				return nil, 0, ferr("tools", "must be a non-empty array")
			}
			row.Tools = copyRaw(tools)
		}
	default:
		mode = modePayload
		if kind(payload) != kindObject {
			return nil, 0, wrongKind("payload", "a non-empty object", payload)
		}
		if !hasAnyMember(payload) {
			return nil, 0, ferr("payload", "must be a non-empty object")
		}
		row.Payload = copyRaw(payload)
	}

	if messageMode != nil {
		mm, fe := stringValue("message_mode", messageMode)
		if fe != nil {
			return nil, 0, fe
		}
		switch mm {
		case "history":
		case "delta":
			if messages == nil {
				return nil, 0, ferr("message_mode", "\"delta\" is only supported with messages")
			}
			if extr != nil && kind(extr) == kindObject && hasMember(extr, "messages") {
				return nil, 0, ferr("extra.messages", "not allowed with message_mode \"delta\"")
			}
			row.DeltaMessages = true
		default:
			return nil, 0, ferr("message_mode", "must be \"history\" or \"delta\", got %q", mm)
		}
	}
	if fe = timing(row, timestamp, delay, scaleMS); fe != nil {
		return nil, 0, fe
	}
	if outputLength != nil {
		if row.OutputLength, fe = count("output_length", outputLength); fe != nil {
			return nil, 0, fe
		}
		row.HasOutputLength = true
	}
	if sessionID != nil {
		if row.SessionID, fe = stringValue("session_id", sessionID); fe != nil {
			return nil, 0, fe
		}
	}
	if extr != nil {
		if row.Extra, fe = extraObject("extra", extr); fe != nil {
			return nil, 0, fe
		}
	}
	return row, mode, nil
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

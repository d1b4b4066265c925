package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aiperf/toolkit/lib/internal/jsonl"
)

// Format names, as aiperf spells them in --custom-dataset-type.
const (
	TypeMooncake   = "mooncake_trace"
	TypeBailian    = "bailian_trace"
	TypeBurstGPT   = "burst_gpt_trace"
	TypeSageMaker  = "sagemaker_data_capture"
	TypeRawPayload = "raw_payload"
	TypeInputsJSON = "inputs_json"
	TypeSingleTurn = "single_turn"
	TypeMultiTurn  = "multi_turn"
)

// Types lists every supported format name.
var Types = []string{
	TypeMooncake,
	TypeBailian,
	TypeBurstGPT,
	TypeSageMaker,
	TypeRawPayload,
	TypeInputsJSON,
	TypeSingleTurn,
	TypeMultiTurn,
	TypeWeka,
}

// KVBlockSize returns the tokens per hash_id block that traces of type typ
// were recorded with: 16 for bailian_trace (Alibaba's serving stack), 512
// for the others (Mooncake's KV block).
func KVBlockSize(typ string) int {
	switch typ {
	case TypeBailian:
		return 16
	case TypeWeka:
		return 64 // each file says its own; 64 is the corpus's
	}
	return 512
}

// ErrUnknownType is wrapped by the error [Open] and [NewReader] return for a
// type name that is not in [Types].
var ErrUnknownType = errors.New("trace: unknown type")

// Row is one request (one turn) of a trace, whatever the input format.
//
// A Row returned by [Reader.Next] is freshly allocated and owns all its
// slices; the caller may keep or modify it.
//
// At most one of Payload, Messages and Text is the request's input, checked
// in that order; when none is set, the prompt is synthesised from
// InputLength (and HashIDs). single_turn and multi_turn rows always carry
// Messages and, when the turn is exactly one text without media, also Text.
type Row struct {
	Source string // file the row came from (for errors)
	// Line is the 1-based line of the row in Source. For inputs_json it is
	// the 1-based ordinal of the payload in the document; for burst_gpt_trace
	// the CSV line where the data row starts.
	Line int64
	// Seq is the 0-based position of the row in the whole input: file order,
	// files of a directory in sorted order, rows that the offset and length
	// filters drop included (so Seq does not depend on the filters). It is
	// unique within one input and is the record "line" key downstream. Rows
	// are returned in Seq order except for sagemaker_data_capture (sorted by
	// time) and bailian_trace (grouped by session, then by turn).
	Seq int64
	// SessionID groups rows into one conversation. "" when the format has
	// none: then every row is its own session and the caller names it.
	SessionID string
	// SessionGenerated reports that SessionID was made up by this package
	// (multi_turn lines without session_id, raw_payload directory mode) and
	// is not in the input; callers may rename such sessions.
	SessionGenerated bool
	Turn             int // 0-based turn within its session, in the format's order

	HasTimestamp bool
	TimestampNS  int64 // arrival time from trace start, in ns (not negative)
	HasDelay     bool
	DelayNS      int64 // wait after the previous turn, in ns (not negative)

	InputLength     int // prompt tokens to synthesise; 0 when absent
	HasOutputLength bool
	OutputLength    int // max tokens; capped by Options.MaxOutputLength

	HashIDs []uint64 // KV block ids, exact

	Text    string // literal prompt text (mooncake text_input, single-text turns)
	HasText bool

	Messages json.RawMessage // OpenAI messages array, verbatim or built per aiperf's rule
	Tools    json.RawMessage // OpenAI tools array, verbatim (only with Messages)
	Payload  json.RawMessage // whole request body, exact input bytes
	Extra    json.RawMessage // object shallow-merged into the request body

	// DeltaMessages reports mooncake message_mode "delta": Messages holds
	// only the new messages of this turn, to be appended to the history.
	DeltaMessages bool

	// ContextMode says how the turns of the row's session accumulate, as the
	// Python aiperf's ConversationContextMode: ContextDeltas or
	// ContextMessageArray, the same on every row of a session; "" when the
	// trace does not say (replay then chooses, see its --history).
	ContextMode string

	// Agentic is the session tree and recorded timing of a weka_trace
	// row (nil for the other formats).
	Agentic *Agentic
}

// Context modes a row can carry (the Python aiperf's names).
const (
	// ContextDeltas: each turn holds only its new messages; the session's
	// earlier turns, each followed by the server's live reply, go before
	// them (deltas_without_responses, the Python aiperf's default for
	// multi-turn sessions and mooncake message_mode "delta").
	ContextDeltas = "deltas_without_responses"
	// ContextMessageArray: each turn carries its whole conversation,
	// recorded replies included, and is sent as it is
	// (message_array_with_responses, the Python aiperf's mode for mooncake
	// sessions of messages or payload rows).
	ContextMessageArray = "message_array_with_responses"
)

// Error is a decoding error at a place in the input. Its message has the
// shape "file:line: field: problem"; Line is 0 and Field empty when they do
// not apply. Field is a JSON path or CSV column, e.g. "hash_ids[3]". It is
// the error of every line decoder of the module (records and replay
// records too).
type Error = jsonl.Error

// fieldError is a problem with one field of one record; the decoder that
// sees it adds the file and line.
type fieldError struct {
	field string
	msg   string
}

func (e *fieldError) Error() string {
	if e.field == "" {
		return e.msg
	}
	return e.field + ": " + e.msg
}

func ferr(field, format string, args ...any) *fieldError {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// at turns err into an *Error located at file:line. A *fieldError keeps its
// field; an *Error is returned unchanged.
func at(file string, line int64, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var fe *fieldError
	if errors.As(err, &fe) && fe != nil {
		return &Error{File: file, Line: line, Field: fe.field, Err: errors.New(fe.msg)}
	}
	return &Error{File: file, Line: line, Err: err}
}

func joinField(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	case strings.HasPrefix(field, "["):
		return prefix + field
	}
	return prefix + "." + field
}

// within prefixes the field of a *fieldError (nil stays nil).
func within(prefix string, err *fieldError) *fieldError {
	if err == nil {
		return nil
	}
	return &fieldError{field: joinField(prefix, err.field), msg: err.msg}
}

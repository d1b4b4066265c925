// Package record reads and writes the records JSONL stream that flows from
// aiperf-tokenize to aiperf-pack.
//
// One object per line, "v":1 on every line, snake_case keys:
//
//	{"v":1,"line":7,"session_id":"s7","session":6,"turn":0,"timestamp_ms":1234.5,
//	 "input_tokens":6758,"max_tokens":500,"prompt":"..."}
//
// Exactly one of prompt (a string), messages (an OpenAI messages array),
// payload (a verbatim request body object) or block_messages (messages in
// the block form: see blocks.go, with the block lines it refers to) is
// present. tools (array, only with
// messages) and extra (object, merged into the formatted body) are optional.
// session is an optional dense session number (0-based, in order of first
// appearance); writers that know it save readers a session-id map.
// context_mode, optional, says how the turns of the record's session
// accumulate (the Python aiperf's ConversationContextMode names):
// "deltas_without_responses" (the turn holds only its new messages; replay
// sends the session's earlier turns, each followed by the server's live
// reply, before them) or "message_array_with_responses" (the turn carries
// its whole conversation and is sent as it is). Every record of a session
// carries the same value or none does; a payload record cannot be deltas.
// model, parent_session, spawn_turn, join_turn, agent, api_time_ms and
// think_time_ms, optional, place an agentic record (weka_trace) in its
// session tree and keep its recorded timing (see Tree).
// hash_ids (an array of unsigned 64-bit integers) and block_size (tokens per
// hash_id block), optional and always together, are the trace's KV block ids
// of the prompt, which aiperf-pack carries into the store so that the trace's
// ideal prefix-cache hit rate can be computed later.
// The stream ends with {"v":1,"end":true,"records":N}: a stream without it was
// cut short, and aiperf-pack refuses it. The end line may carry "settings"
// (a string): aiperf-tokenize's description of the settings that shaped the
// records, in the words of `aiperf-hash key --explain`, which aiperf-pack
// writes into the store; a stream without it (an older producer, hand-made
// records) reads as before. Readers reject an unknown "v" and ignore unknown
// fields.
package record

import "github.com/aiperf/toolkit/lib/internal/jsonl"

// Version is the records line format version.
const Version = 1

// Kind says which body source a record carries.
type Kind uint8

const (
	KindNone     Kind = iota
	KindPrompt        // Raw is a JSON string literal
	KindMessages      // Raw is a JSON array
	KindPayload       // Raw is a JSON object: the whole request body, verbatim
	// KindBlockMessages is a messages record in the block form: Raw is
	// the block_messages array, Pieces the messages array it composes.
	KindBlockMessages
	// KindBlock is a block line (not a record): block Block's text is
	// Raw, a JSON string's escaped bytes without the quotes.
	KindBlock
)

func (k Kind) String() string {
	switch k {
	case KindPrompt:
		return "prompt"
	case KindMessages:
		return "messages"
	case KindPayload:
		return "payload"
	case KindBlockMessages:
		return "block_messages"
	case KindBlock:
		return "block"
	}
	return "none"
}

// Record is one turn. Raw, Tools and Extra alias the decoder's buffer and are
// valid until the next call to Decoder.Next.
type Record struct {
	Line         uint64
	SessionID    string
	Session      int64 // -1 when the line has no "session"
	Turn         uint32
	HasTimestamp bool
	TimestampNS  int64
	HasDelay     bool
	DelayNS      int64
	InputTokens  uint32
	HasMaxTokens bool
	MaxTokens    uint32
	Kind         Kind
	Raw          []byte
	Tools        []byte
	Extra        []byte
	// ContextMode is ContextDeltas, ContextMessageArray or "" (not said).
	ContextMode string
	// HashIDs are the trace's KV block ids of the prompt (Mooncake's
	// hash_ids), each naming BlockSize tokens (the last block holds the
	// rest); nil when the trace gave none. BlockSize is 0 exactly when
	// HashIDs is empty. HashIDs is reused by the decoder: valid until the
	// next call to Decoder.Next.
	HashIDs   []uint64
	BlockSize uint32

	// Pieces compose a KindBlockMessages record's messages array
	// (literal bytes and runs of blocks); valid until the next call to
	// Decoder.Next.
	Pieces []Piece
	// Block is a KindBlock line's block number.
	Block uint32

	// Tree is the record's place in an agentic session tree and its
	// recorded timing (weka_trace); nil for the other formats.
	Tree *Tree
}

// Tree is an agentic record's session tree and recorded timing, on the
// line as "model", "parent_session", "spawn_turn", "join_turn" (absent:
// the parent never waits), "agent", "api_time_ms" and "think_time_ms".
type Tree struct {
	Model         string // the model the trace recorded (or --model, --model-map)
	ParentSession string // "" for a root session
	// SpawnTurn is the parent's turn after which the session starts (-1:
	// with the parent's start); JoinTurn the parent's turn that waits for
	// it (-1: none, a background child). Both -1 for a root.
	SpawnTurn, JoinTurn int64
	Agent               string // subagent_type, "chain" for a detected parallel chain
	HasAPITime          bool
	APITimeNS           int64
	HasThinkTime        bool
	ThinkTimeNS         int64
}

// Context modes (the context_mode field).
const (
	ContextDeltas       = "deltas_without_responses"
	ContextMessageArray = "message_array_with_responses"
)

// Error is a problem with one line of a records stream: "file:line: field:
// problem" (the module's one line-error type, shared with lib/trace and
// lib/result).
type Error = jsonl.Error

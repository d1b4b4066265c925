// Package result defines aiperf-replay's per-request record and its JSONL
// codec: the contract between the replayer that writes results.jsonl and
// everything that reads it (metrics, `aiperf-replay report`, users' scripts).
//
// One object per line, "v":1 on every line, snake_case keys, times as integer
// nanoseconds. Absolute times are "*_unix_ns" (wall clock, but taken as one
// wall-clock base plus monotonic offsets, so every difference between two of
// them in one run is a monotonic duration); durations are "*_ns".
//
//	{"v":1,"record":17,"session":"s3","turn":1,"x_request_id":"…","phase":"profiling",
//	 "intended_unix_ns":…,"sent_unix_ns":…,"first_byte_unix_ns":…,"first_token_unix_ns":…,
//	 "end_unix_ns":…,"chunk_offsets_ns":[250113,…],"status":200,
//	 "input_tokens":512,"max_tokens":64,"output_tokens":64,"output_tokens_source":"usage",
//	 "usage":{"prompt_tokens":512,"completion_tokens":64,"total_tokens":576,"cached_tokens":448}}
//
// The first record of a run also carries "run", the run's identity and
// settings (see RunInfo); after its last record a run writes an end line,
// which is not a request ({"v":1,"end":true,…}, see End); a streamed
// answer's record carries "streamed":true.
// A failed request carries "error":{"code":…,"type":"…","message":"…"}; a
// cancelled one also "cancelled":true. "session_num" and "x_correlation_id"
// carry what aiperf's profile_export.jsonl names so; "client_output_tokens"
// and "client_reasoning_tokens" carry the client's own count beside usage. Fields whose value is unknown are
// omitted. Readers reject an unknown "v" with the line number and ignore
// unknown fields; adding a field does not bump the version.
package result

import (
	"fmt"

	"github.com/aiperf/toolkit/lib/internal/jsonl"
)

// Version is the line format version.
const Version = 1

// Phases of a run.
const (
	PhaseWarmup    = "warmup"
	PhaseProfiling = "profiling"
)

// Sources of an output token count.
const (
	SourceUsage  = "usage"  // the server's usage.completion_tokens (minus reasoning tokens)
	SourceClient = "client" // counted by the client's tokenizer from the received text
)

// Record is one request as the replayer saw it.
type Record struct {
	Record    int    // record index in the store ("record")
	Session   string // session id ("session")
	Turn      int    // turn within the session ("turn")
	RequestID string // the X-Request-ID sent ("x_request_id")
	Phase     string // PhaseWarmup or PhaseProfiling ("phase"); "" reads as profiling

	// SessionNum numbers the run's sessions 0, 1, 2, ... in the order the
	// run started them (for single-turn stores: the request's number), as
	// aiperf's session_num ("session_num", omitted when 0).
	SessionNum int
	// Shard and Shards: the request was sent by shard Shard of a replay of
	// Shards shards (aiperf-replay --shard; "shard", "shards", omitted
	// when the run was not sharded).
	Shard, Shards int
	// CorrelationID is the X-Correlation-ID sent, one per session
	// ("x_correlation_id").
	CorrelationID string

	// IntendedNS is when the schedule meant the request to be sent: the
	// trace time divided by the speedup for a fixed schedule, the arrival
	// process's time for a rate, the moment a slot or the previous turn (plus
	// its delay) freed it for closed-loop modes ("intended_unix_ns").
	IntendedNS int64
	// CeilingWaitNS is how long the --concurrency ceiling held the request
	// past IntendedNS, waiting for a session slot the user capped (0 when
	// it did not; "ceiling_wait_ns", omitted when 0). The client's own
	// lateness is SentNS - IntendedNS - CeilingWaitNS.
	CeilingWaitNS int64
	// SentNS is when the request was handed to the connection, the start of
	// every latency below ("sent_unix_ns").
	SentNS int64
	// FirstByteNS is when the first byte of the response arrived (time to
	// first byte); 0 when no response arrived ("first_byte_unix_ns").
	FirstByteNS int64
	// FirstTokenNS is when the first response carrying content (content or
	// reasoning_content, non-empty) arrived; 0 when none did
	// ("first_token_unix_ns").
	FirstTokenNS int64
	// FirstOutputNS is when the first non-reasoning content arrived, written
	// only when it differs from FirstTokenNS ("first_output_unix_ns").
	FirstOutputNS int64
	// EndNS is when the response was complete (or the request failed or was
	// cancelled) ("end_unix_ns").
	EndNS int64
	// ChunkOffsetsNS are the arrival times of every content-bearing response
	// (an SSE event with non-empty content, or the whole body of a
	// non-streamed response), in nanoseconds after SentNS
	// ("chunk_offsets_ns"). The first equals FirstTokenNS-SentNS.
	ChunkOffsetsNS []int64

	Status int // HTTP status; 0 when no response arrived ("status")
	// Streamed reports that the answer was read as server-sent events (a
	// text/event-stream body, or one that began as one): its chunks are the
	// events' arrival times ("streamed", omitted when false). Streaming
	// metrics (TTFT, ITL, ...) follow what the answers were.
	Streamed  bool
	Err       *Error // nil for a successful request ("error")
	Cancelled bool   // cancelled by the client on purpose ("cancelled")

	// InputTokens are the prompt tokens of the body sent: the store's count
	// for the turn, plus, when replay spliced a conversation's history in,
	// the earlier turns' and replies' tokens; 0 = unknown ("input_tokens").
	InputTokens     int64
	MaxTokens       int64  // requested output tokens; 0 = none requested ("max_tokens")
	OutputTokens    int64  // non-reasoning output tokens ("output_tokens")
	ReasoningTokens int64  // reasoning output tokens ("reasoning_tokens")
	OutputSource    string // SourceUsage or SourceClient; "" = not counted ("output_tokens_source")
	Usage           *Usage // the last non-null usage object the server sent ("usage")

	// ClientCounted reports that the client also counted the received text
	// with its own tokenizer while OutputTokens came from usage, so the two
	// can be compared (aiperf's usage_*_diff_pct). ClientOutputTokens and
	// ClientReasoningTokens are those counts ("client_output_tokens",
	// "client_reasoning_tokens"; either key present sets ClientCounted).
	ClientCounted         bool
	ClientOutputTokens    int64
	ClientReasoningTokens int64

	// HTTP is the request's connection phases and bytes ("http", see
	// HTTP); nil when they were not timed.
	HTTP *HTTP

	// Run describes the run; the first record a run writes carries it, the
	// others leave it nil ("run", see RunInfo).
	Run *RunInfo

	// End is set, and nothing else, when Parse read a run's end line
	// ("end":true, see End), which is not a request. Decoder skips those.
	End *End
}

// Usage is the server's own token accounting.
type Usage struct {
	PromptTokens     int64 // "prompt_tokens"
	CompletionTokens int64 // "completion_tokens"
	TotalTokens      int64 // "total_tokens"
	ReasoningTokens  int64 // "reasoning_tokens" (from completion_tokens_details); 0 = none reported
	// CachedTokens are the prompt tokens the server served from its prefix
	// cache, its prompt_tokens_details.cached_tokens ("cached_tokens",
	// written only when the server sent it: HasCached).
	CachedTokens int64
	HasCached    bool
}

// Error describes why a request failed.
type Error struct {
	Code int // HTTP status, or 499 for a client cancellation, 0 for a transport failure ("code")
	// Type is a short class ("type"): for a status outside 2xx its reason
	// phrase ("Internal Server Error"), as aiperf records it; else
	// "TimeoutError", "ConnectionError", ...; records written before carry
	// "HTTPError" for every status.
	Type string
	// Message is the detail ("message"): for a status outside 2xx the body
	// as it came (up to 1000 bytes), as aiperf records it.
	Message string
}

func (e *Error) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("%s %d: %s", e.Type, e.Code, e.Message)
	}
	return e.Type + ": " + e.Message
}

// OK reports whether the request succeeded.
func (r *Record) OK() bool { return r.Err == nil }

// Warmup reports whether the record belongs to the warmup phase.
func (r *Record) Warmup() bool { return r.Phase == PhaseWarmup }

// LatenessNS is how late the request was sent: SentNS - IntendedNS.
func (r *Record) LatenessNS() int64 { return r.SentNS - r.IntendedNS }

// DecodeError is a problem with one line of a records file: "file:line:
// field: problem" (the module's one line-error type, shared with lib/trace
// and lib/record).
type DecodeError = jsonl.Error

// Package trace decodes the input traces and datasets that the Python aiperf
// reads into one uniform row type, [Row].
//
// Supported formats (see [Types]): mooncake_trace, bailian_trace,
// burst_gpt_trace (CSV), sagemaker_data_capture, raw_payload, inputs_json,
// single_turn and multi_turn. [Open] reads a file or a directory, [NewReader]
// a single stream; with an empty [Options.Type] the format is detected from
// the first non-blank record ([Detect]).
//
// Streaming: mooncake_trace, single_turn, multi_turn, raw_payload and
// burst_gpt_trace are decoded line by line in memory that does not grow with
// the number of rows (apart from one small entry per distinct session id).
// A line may be up to [Options.MaxLineBytes] long (256 MiB by default), and
// reading one costs about twice its length. sagemaker_data_capture
// (zero-aligned and sorted by time), bailian_trace (sessions rebuilt from
// parent links) and inputs_json (one JSON document) are read whole before
// the first row is returned. Inside a directory, only regular files are
// read (a named pipe would block forever).
//
// Exactness: hash ids are parsed from the JSON text as unsigned 64-bit
// integers, never through float64; timestamps and delays are converted from
// their decimal text to integer nanoseconds with decimal arithmetic (digits
// below one nanosecond are truncated); verbatim values (payloads, messages,
// tools, extra) keep the exact bytes of the input, except that bodies taken
// from a multi-line document (inputs_json, a decoded SageMaker capture) lose
// the white space between their tokens, so that they fit on one line.
//
// Text must be valid Unicode: a string with bytes that are not UTF-8, or an
// escape of half a UTF-16 surrogate pair, is an error naming the JSON path
// of the value (or the CSV column), whether the value is decoded or passed
// on verbatim. Token counts must fit in 32 bits ([MaxTokens]).
//
// Multi-turn context: a mooncake_trace row may say how its session's turns
// accumulate, with message_mode ("history", the default, or "delta", as the
// Python aiperf reads it, case-sensitively) and context_mode (the Python
// aiperf's ConversationContextMode, case-insensitively). [Row.ContextMode]
// carries the result, inferred as the Python aiperf infers it when no row
// says; every row of a session must agree, and a mode that neither
// aiperf-tokenize nor aiperf-replay can honour is an error.
//
// Every decoding problem is returned as an [*Error] whose message has the
// shape "file:line: field: problem". Decoding stops at the first error, as
// aiperf does.
//
// Cache keys trust the records a trace becomes: a change to them bumps
// traceversion.Version (lib/trace/traceversion; lib/cmd/hashcmd's golden pair fails,
// naming it, otherwise).
package trace

package result

import (
	"bufio"
	"io"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// Append appends the JSONL line of r (with its newline) to dst. Keys come in
// a fixed order and unknown values are omitted, so equal records give equal
// bytes.
func Append(dst []byte, r *Record) []byte {
	dst = append(dst, `{"v":1,`...)
	if r.Run != nil {
		dst = appendRun(dst, r.Run)
		dst = append(dst, ',')
	}
	dst = append(dst, `"record":`...)
	dst = strconv.AppendInt(dst, int64(r.Record), 10)
	dst = appendStr(dst, "session", r.Session)
	dst = appendInt(dst, "turn", int64(r.Turn), true)
	dst = appendStr(dst, "x_request_id", r.RequestID)
	dst = appendInt(dst, "session_num", int64(r.SessionNum), false)
	if r.Shards > 0 {
		dst = appendInt(dst, "shard", int64(r.Shard), true)
		dst = appendInt(dst, "shards", int64(r.Shards), true)
	}
	dst = appendStr(dst, "x_correlation_id", r.CorrelationID)
	dst = appendStr(dst, "phase", r.Phase)
	dst = appendInt(dst, "intended_unix_ns", r.IntendedNS, true)
	dst = appendInt(dst, "ceiling_wait_ns", r.CeilingWaitNS, false)
	dst = appendInt(dst, "sent_unix_ns", r.SentNS, true)
	dst = appendInt(dst, "first_byte_unix_ns", r.FirstByteNS, false)
	dst = appendInt(dst, "first_token_unix_ns", r.FirstTokenNS, false)
	if r.FirstOutputNS != r.FirstTokenNS {
		dst = appendInt(dst, "first_output_unix_ns", r.FirstOutputNS, true)
	}
	dst = appendInt(dst, "end_unix_ns", r.EndNS, true)
	if len(r.ChunkOffsetsNS) > 0 {
		dst = append(dst, `,"chunk_offsets_ns":[`...)
		for i, c := range r.ChunkOffsetsNS {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, c, 10)
		}
		dst = append(dst, ']')
	}
	dst = appendInt(dst, "status", int64(r.Status), true)
	if r.Streamed {
		dst = append(dst, `,"streamed":true`...)
	}
	if r.Err != nil {
		dst = append(dst, `,"error":{"code":`...)
		dst = strconv.AppendInt(dst, int64(r.Err.Code), 10)
		dst = append(dst, `,"type":`...)
		dst = jsonx.AppendString(dst, r.Err.Type)
		dst = append(dst, `,"message":`...)
		dst = jsonx.AppendString(dst, r.Err.Message)
		dst = append(dst, '}')
	}
	if r.Cancelled {
		dst = append(dst, `,"cancelled":true`...)
	}
	dst = appendInt(dst, "input_tokens", r.InputTokens, false)
	dst = appendInt(dst, "max_tokens", r.MaxTokens, false)
	if r.OutputSource != "" {
		dst = appendInt(dst, "output_tokens", r.OutputTokens, true)
		dst = appendInt(dst, "reasoning_tokens", r.ReasoningTokens, false)
		dst = appendStr(dst, "output_tokens_source", r.OutputSource)
	}
	if r.ClientCounted {
		dst = appendInt(dst, "client_output_tokens", r.ClientOutputTokens, true)
		dst = appendInt(dst, "client_reasoning_tokens", r.ClientReasoningTokens, false)
	}
	if u := r.Usage; u != nil {
		dst = append(dst, `,"usage":{"prompt_tokens":`...)
		dst = strconv.AppendInt(dst, u.PromptTokens, 10)
		dst = append(dst, `,"completion_tokens":`...)
		dst = strconv.AppendInt(dst, u.CompletionTokens, 10)
		dst = append(dst, `,"total_tokens":`...)
		dst = strconv.AppendInt(dst, u.TotalTokens, 10)
		dst = appendInt(dst, "reasoning_tokens", u.ReasoningTokens, false)
		dst = appendInt(dst, "cached_tokens", u.CachedTokens, u.HasCached)
		dst = append(dst, '}')
	}
	if r.HTTP != nil {
		dst = appendHTTP(dst, r.HTTP)
	}
	return append(dst, '}', '\n')
}

func appendStr(dst []byte, key, v string) []byte {
	if v == "" {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return jsonx.AppendString(dst, v)
}

func appendInt(dst []byte, key string, v int64, always bool) []byte {
	if v == 0 && !always {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, v, 10)
}

// Encoder writes records JSONL through a buffer. It is not safe for
// concurrent use; Flush before the underlying writer is closed.
type Encoder struct {
	w   *bufio.Writer
	buf []byte
	n   int64
}

// NewEncoder writes to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: bufio.NewWriterSize(w, 256<<10)}
}

// Encode writes one record.
func (e *Encoder) Encode(r *Record) error {
	e.buf = Append(e.buf[:0], r)
	e.n++
	_, err := e.w.Write(e.buf)
	return err
}

// Count returns the number of records written.
func (e *Encoder) Count() int64 { return e.n }

// Flush writes any buffered data.
func (e *Encoder) Flush() error { return e.w.Flush() }

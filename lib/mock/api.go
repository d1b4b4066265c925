package mock

import (
	"context"
	"net/http"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// The endpoints the mock serves, by the request path they answer.
const (
	apiChat        = "chat"        // /v1/chat/completions
	apiCompletions = "completions" // /v1/completions
	apiEmbeddings  = "embeddings"  // /v1/embeddings
	apiResponses   = "responses"   // /v1/responses (OpenAI Responses API)
	apiMessages    = "messages"    // /v1/messages (Anthropic Messages API)
)

// eventAPI returns the replyPlan.api of an endpoint: the ones whose
// replies this file writes.
func eventAPI(api string) string {
	if api == apiResponses || api == apiMessages {
		return api
	}
	return ""
}

// embeddingDims is the length of every embedding the mock returns.
const embeddingDims = 8

// embed answers an embeddings request once its time to first token has
// passed (the whole computation is one prefill): one embedding per input
// text, usage with the prompt tokens and no output tokens.
func (s *Server) embed(ctx context.Context, w http.ResponseWriter, p *replyPlan, q *request, clock *tokenClock) {
	p.prompt = s.counts.count(q.input, func(fn func(string)) { inputTexts(q.input, fn) })
	p.finish = "stop"
	if !clock.fast && !s.sleepUntil(ctx, clock.first) {
		return
	}
	inputs := 1
	if q.input[0] == '[' {
		inputs = 0
		jsonx.Elements(q.input, 0, func(int, []byte, int) error { inputs++; return nil })
	}
	b := []byte(`{"object":"list","data":[`)
	rg := newRNG(p.offset, 0)
	for i := 0; i < inputs; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":[`...)
		for d := 0; d < embeddingDims; d++ {
			if d > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, rg.float()*2-1, 'f', 6, 64)
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"model":`...)
	b = append(b, p.model...)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, p.prompt, 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, p.prompt, 10)
	b = append(b, "}}"...)
	if p.fault == FaultMalformed {
		b = b[:len(b)*2/3]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// appendID appends the reply's id with a prefix.
func appendID(b []byte, prefix string, p *replyPlan) []byte {
	b = append(b, '"')
	b = append(b, prefix...)
	b = strconv.AppendUint(b, p.id, 10)
	return append(b, '"')
}

// appendSSE starts a named server-sent event.
func appendSSE(b []byte, event string) []byte {
	b = append(b, "event: "...)
	b = append(b, event...)
	return append(b, "\ndata: "...)
}

// appendEventToken appends the events of token i of a Responses or
// Messages stream: the stream's opening events before the first token,
// and a block change where reasoning gives way to text.
func (s *Server) appendEventToken(b []byte, p *replyPlan, i int) []byte {
	piece := s.text.piece(p.offset, i)
	if p.api == apiResponses {
		if i == 0 {
			b = appendSSE(b, "response.created")
			b = append(b, `{"type":"response.created","response":`...)
			b = s.appendResponse(b, p, "in_progress", false)
			b = append(b, "}\n\n"...)
		}
		typ, item := "response.output_text.delta", "msg_"
		if i < p.reasoning {
			typ, item = "response.reasoning_text.delta", "rs_"
		}
		b = appendSSE(b, typ)
		b = append(b, `{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","item_id":`...)
		b = appendID(b, item, p)
		b = append(b, `,"output_index":0,"content_index":0,"delta":"`...)
		b = append(b, piece...)
		return append(b, `"}`...)
	}
	if i == 0 {
		b = appendSSE(b, "message_start")
		b = append(b, `{"type":"message_start","message":{"id":`...)
		b = appendID(b, "msg_", p)
		b = append(b, `,"type":"message","role":"assistant","content":[],"model":`...)
		b = append(b, p.model...)
		b = append(b, `,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
		b = strconv.AppendInt(b, p.prompt, 10)
		if p.cacheOn {
			b = append(b, `,"cache_read_input_tokens":`...)
			b = strconv.AppendInt(b, p.cached, 10)
		}
		b = append(b, `,"output_tokens":1}}}`+"\n\n"...)
	}
	if i == 0 || i == p.reasoning {
		if i > 0 {
			b = appendBlockStop(b, 0)
		}
		b = appendSSE(b, "content_block_start")
		b = append(b, `{"type":"content_block_start","index":`...)
		b = strconv.AppendInt(b, int64(blockIndex(p, i)), 10)
		if i < p.reasoning {
			b = append(b, `,"content_block":{"type":"thinking","thinking":""}}`+"\n\n"...)
		} else {
			b = append(b, `,"content_block":{"type":"text","text":""}}`+"\n\n"...)
		}
	}
	b = appendSSE(b, "content_block_delta")
	b = append(b, `{"type":"content_block_delta","index":`...)
	b = strconv.AppendInt(b, int64(blockIndex(p, i)), 10)
	if i < p.reasoning {
		b = append(b, `,"delta":{"type":"thinking_delta","thinking":"`...)
	} else {
		b = append(b, `,"delta":{"type":"text_delta","text":"`...)
	}
	b = append(b, piece...)
	return append(b, `"}}`...)
}

// blockIndex is the Messages content block of token i: 0 for thinking,
// then 0 or 1 for text.
func blockIndex(p *replyPlan, i int) int {
	if i < p.reasoning || p.reasoning == 0 {
		return 0
	}
	return 1
}

func appendBlockStop(b []byte, index int) []byte {
	b = appendSSE(b, "content_block_stop")
	b = append(b, `{"type":"content_block_stop","index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	return append(b, "}\n\n"...)
}

// appendEventTail appends a Responses or Messages stream's closing events,
// with the usage.
func (s *Server) appendEventTail(b []byte, p *replyPlan) []byte {
	if p.api == apiResponses {
		typ, status := "response.completed", "completed"
		if p.finish == "length" {
			typ, status = "response.incomplete", "incomplete"
		}
		b = appendSSE(b, typ)
		b = append(b, `{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","response":`...)
		b = s.appendResponse(b, p, status, true)
		return append(b, "}\n\n"...)
	}
	if p.tokens > 0 {
		b = appendBlockStop(b, blockIndex(p, p.tokens-1))
	}
	b = appendSSE(b, "message_delta")
	b = append(b, `{"type":"message_delta","delta":{"stop_reason":"`...)
	b = append(b, anthropicStop(p)...)
	b = append(b, `","stop_sequence":null},"usage":{"output_tokens":`...)
	b = strconv.AppendInt(b, int64(p.tokens), 10)
	b = append(b, "}}\n\n"...)
	b = appendSSE(b, "message_stop")
	return append(b, `{"type":"message_stop"}`+"\n\n"...)
}

func anthropicStop(p *replyPlan) string {
	if p.finish == "length" {
		return "max_tokens"
	}
	return "end_turn"
}

// appendResponse appends a Responses API response object: with its output
// and usage when done.
func (s *Server) appendResponse(b []byte, p *replyPlan, status string, done bool) []byte {
	b = append(b, `{"id":`...)
	b = appendID(b, "resp_", p)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, s.start, 10)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","model":`...)
	b = append(b, p.model...)
	if !done {
		return append(b, `,"output":[],"usage":null}`...)
	}
	if status == "incomplete" {
		b = append(b, `,"incomplete_details":{"reason":"max_output_tokens"}`...)
	}
	b = append(b, `,"output":[`...)
	if p.reasoning > 0 {
		b = append(b, `{"type":"reasoning","id":`...)
		b = appendID(b, "rs_", p)
		b = append(b, `,"summary":[],"content":[{"type":"reasoning_text","text":"`...)
		b = s.appendText(b, p, 0, p.reasoning)
		b = append(b, `"}]},`...)
	}
	b = append(b, `{"type":"message","id":`...)
	b = appendID(b, "msg_", p)
	b = append(b, `,"status":"completed","role":"assistant","content":[{"type":"output_text","text":"`...)
	b = s.appendText(b, p, p.reasoning, p.tokens)
	b = append(b, `","annotations":[]}]}],"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, p.prompt, 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, p.cached, 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, int64(p.tokens), 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(p.reasoning), 10)
	b = append(b, `},"total_tokens":`...)
	b = strconv.AppendInt(b, p.prompt+int64(p.tokens), 10)
	return append(b, "}}"...)
}

// appendText appends tokens [from, to) of the reply's text.
func (s *Server) appendText(b []byte, p *replyPlan, from, to int) []byte {
	for i := from; i < to; i++ {
		b = append(b, s.text.piece(p.offset, i)...)
	}
	return b
}

// appendEventWhole appends a whole (non-streamed) Responses or Messages
// reply.
func (s *Server) appendEventWhole(b []byte, p *replyPlan) []byte {
	if p.api == apiResponses {
		status := "completed"
		if p.finish == "length" {
			status = "incomplete"
		}
		return s.appendResponse(b, p, status, true)
	}
	b = append(b, `{"id":`...)
	b = appendID(b, "msg_", p)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = append(b, p.model...)
	b = append(b, `,"content":[`...)
	if p.reasoning > 0 {
		b = append(b, `{"type":"thinking","thinking":"`...)
		b = s.appendText(b, p, 0, p.reasoning)
		b = append(b, `","signature":""},`...)
	}
	b = append(b, `{"type":"text","text":"`...)
	b = s.appendText(b, p, p.reasoning, p.tokens)
	b = append(b, `"}],"stop_reason":"`...)
	b = append(b, anthropicStop(p)...)
	b = append(b, `","stop_sequence":null,"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, p.prompt, 10)
	if p.cacheOn {
		b = append(b, `,"cache_read_input_tokens":`...)
		b = strconv.AppendInt(b, p.cached, 10)
	}
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(p.tokens), 10)
	return append(b, "}}"...)
}

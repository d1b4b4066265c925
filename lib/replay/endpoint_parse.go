package replay

import "github.com/aiperf/toolkit/lib/jsonx"

// The answers of the endpoints beyond chat and completions, read by the
// same single walk of a chunk (chunk.go) through the top-level members
// chat and completions chunks do not have:
//
//   - embeddings: {"data":[{"embedding":[...]}],"usage":{"prompt_tokens"}}:
//     an embedding makes the answer a content response (its time is the
//     request latency) without text; usage gives the ISL; OSL is 0.
//   - responses (OpenAI Responses API), streamed: events whose "type" is
//     response.output_text.delta (text) or response.reasoning_text.delta /
//     response.reasoning_summary_text.delta (reasoning) carry a string
//     "delta"; response.completed (and .failed, .incomplete) carries
//     "response" with usage {input_tokens, output_tokens,
//     output_tokens_details.reasoning_tokens} or error. Whole: "output"
//     items whose "content" (and "summary") parts hold the text, by part
//     type (output_text; reasoning_text and summary_text are reasoning).
//   - messages (Anthropic), streamed: content_block_delta's "delta" object
//     has "text" (text_delta) or "thinking" (thinking_delta);
//     message_start's "message" has usage.input_tokens, message_delta a
//     top-level usage with the final output_tokens, which keeps the input
//     tokens seen before. Whole: "content" blocks with "text" or
//     "thinking".
//
//   - any other JSON (a server of its own, the template and raw endpoints):
//     the first top-level string member among "text", "content",
//     "response", "output" and "result" is the answer's text, as the Python
//     aiperf's template endpoint auto-detects text, unless the chunk has a
//     "type" (the events above: Responses' output_text.done repeats the
//     whole text in a top-level "text").
//
// Each such member's value is walked whole (checked) before it is read, so
// a malformed one leaves no trace; a string delta or text is taken only
// once the chunk is known to be well formed, since its "type" may follow
// it.

// apiEvent holds what a chunk's members say that is read once the chunk is
// whole.
type apiEvent struct {
	typ   []byte // the raw "type" value
	delta []byte // a string "delta" (Responses API), raw
	text  []byte // the first top-level string of the generic text members, raw
}

// eventMember reads a top-level member beyond chat's and completions',
// v its whole, well-formed value.
func (rp *reply) eventMember(key, v []byte, ev *apiEvent, f *textFlags) {
	if len(v) > 2 && v[0] == '"' && ev.text == nil && string(key) != `"type"` && string(key) != `"delta"` &&
		string(key) != `"message"` && string(key) != `"data"` {
		ev.text = v // text, content, response, output or result
	}
	switch string(key) {
	case `"type"`:
		ev.typ = v
	case `"delta"`:
		switch v[0] {
		case '"':
			ev.delta = v
		case '{':
			rp.parts(v, 1, f)
		}
	case `"response"`, `"message"`:
		if v[0] == '{' {
			laxObject(v, 0, 1, func(k, v []byte) error {
				switch string(k) {
				case `"usage"`:
					if v[0] == '{' {
						rp.readUsage(v)
					}
				case `"error"`:
					rp.readError(v)
				}
				return nil
			})
		}
	case `"output"`:
		if v[0] == '[' {
			laxArray(v, 0, 1, func(item []byte) error {
				if item[0] == '{' {
					laxObject(item, 0, 2, func(k, v []byte) error {
						if (string(k) == `"content"` || string(k) == `"summary"`) && v[0] == '[' {
							rp.partList(v, 3, f)
						}
						return nil
					})
				}
				return nil
			})
		}
	case `"content"`:
		if v[0] == '[' {
			rp.partList(v, 1, f)
		}
	case `"data"`:
		// An embedding is the answer's content: without one the request
		// has no response to time (aiperf's EmbeddingResponseData).
		if v[0] == '[' {
			laxArray(v, 0, 1, func(item []byte) error {
				if item[0] == '{' {
					laxObject(item, 0, 2, func(k, v []byte) error {
						if string(k) == `"embedding"` && (v[0] == '[' || v[0] == '"') {
							f.content = true
						}
						return nil
					})
				}
				return nil
			})
		}
	}
}

// partList reads an array of content parts or blocks at depth.
func (rp *reply) partList(v []byte, depth int, f *textFlags) {
	laxArray(v, 0, depth, func(part []byte) error {
		if part[0] == '{' {
			rp.parts(part, depth+1, f)
		}
		return nil
	})
}

// parts reads one content part, block or Anthropic delta object: its
// "thinking" is reasoning, its "text" is reasoning for the reasoning part
// types and content otherwise.
func (rp *reply) parts(v []byte, depth int, f *textFlags) {
	var text, thinking, typ []byte
	laxObject(v, 0, depth, func(k, v []byte) error {
		switch string(k) {
		case `"text"`:
			text = v
		case `"thinking"`:
			thinking = v
		case `"type"`:
			typ = v
		}
		return nil
	})
	if appendText(&rp.reasoning, thinking) {
		f.reasoning = true
	}
	switch string(typ) {
	case `"reasoning_text"`, `"summary_text"`:
		if appendText(&rp.reasoning, text) {
			f.reasoning = true
		}
	default:
		if appendText(&rp.content, text) {
			f.content = true
		}
	}
}

// apply takes a generic text, and a string delta by its event type, once
// the chunk is whole.
func (rp *reply) apply(ev *apiEvent, f *textFlags) {
	if ev.typ == nil && appendText(&rp.content, ev.text) {
		f.content = true
	}
	if ev.delta == nil {
		return
	}
	switch string(ev.typ) {
	case `"response.output_text.delta"`:
		if appendText(&rp.content, ev.delta) {
			f.content = true
		}
	case `"response.reasoning_text.delta"`, `"response.reasoning_summary_text.delta"`, `"response.reasoning.delta"`:
		if appendText(&rp.reasoning, ev.delta) {
			f.reasoning = true
		}
	}
}

// countOf reads a usage member's token count: a non-negative integer, or
// null for none. Anything else (a negative or fractional number, a string,
// a count past 2^62) reads as 0 and is the reply's usageErr, the first
// one: the answer's usage cannot be trusted, and its record says so
// instead of counting 0 tokens.
func (rp *reply) countOf(key, v []byte) int64 {
	if string(v) == "null" {
		return 0
	}
	x, ok := jsonx.ParseUint(v)
	if !ok || x > 1<<62 {
		if rp.usageErr == "" {
			rp.usageErr = "usage member " + string(key) + " is not a token count: " + clip(v, 60)
		}
		return 0
	}
	return int64(x)
}

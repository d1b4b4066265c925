package replay

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/result"
)

// reply accumulates what one response says: the generated text (kept as
// escaped JSON string content, so that it can be spliced into a later
// request's messages or unquoted once for counting), the last usage object,
// and a server error reported inside the body.
type reply struct {
	content   []byte // non-reasoning text, escaped, without quotes
	reasoning []byte // reasoning_content / reasoning text, escaped
	usage     result.Usage
	hasUsage  bool
	srvErr    *result.Error
	usageErr  string // the first usage count that is no count (endpoint_parse.go)
	done      bool   // "data: [DONE]" seen
	shape     chunkShape
}

func (rp *reply) reset() {
	*rp = reply{content: rp.content[:0], reasoning: rp.reasoning[:0], shape: chunkShape{buf: rp.shape.buf[:0]}}
}

// chunkShape is the last chunk of the response whose walk found one text
// value, choices[].delta.content (or .message.content, or choices[].text),
// and nothing else the reply takes: pre is its bytes before that value,
// post those after it. A chunk made of pre, a JSON string and post walks
// exactly as that chunk did, with its string in that place (the walk reads
// the value only to find its end and append it), so reply.chunk takes such
// a chunk's string without walking it. A server encodes every chunk of a
// stream the same way (the same id, model and created time; only the text
// changes), so most chunks of a stream cost two compares and the search for
// their string's end instead of the walk. FuzzChunkShape holds the two ways
// to the same result on any bytes.
type chunkShape struct {
	buf       []byte // the chunk; pre and post are slices of it
	pre, post []byte
}

// take appends data's text to content and reports whether data has the
// shape, and whether its text was non-empty.
func (s *chunkShape) take(data []byte, content *[]byte) (matched, text bool) {
	if s.pre == nil || len(data) < len(s.pre)+2+len(s.post) ||
		!bytes.Equal(data[:len(s.pre)], s.pre) || !bytes.Equal(data[len(data)-len(s.post):], s.post) {
		return false, false
	}
	v := data[len(s.pre) : len(data)-len(s.post)]
	if v[0] != '"' {
		return false, false
	}
	if end, err := laxString(v, 0); err != nil || end != len(v) {
		return false, false
	}
	return true, appendText(content, v)
}

// set makes data, whose text value is data[vs:end], the shape.
func (s *chunkShape) set(data []byte, vs, end int) {
	s.buf = append(s.buf[:0], data...)
	s.pre, s.post = s.buf[:vs], s.buf[end:]
}

var doneMarker = []byte("[DONE]")

// errMalformed marks a response body that is not the JSON it should be.
var errMalformed = errors.New("malformed JSON")

// chunk reads one streamed chunk (an OpenAI chat.completion.chunk or
// text_completion object) and reports whether it carried non-empty
// content and non-empty reasoning text.
//
// It walks the chunk once, as laxObject would, reading choices[].text and
// choices[].delta (or .message) .content / .reasoning_content / .reasoning
// as it passes them, and usage and error once their values have been
// walked. A member whose value turns out malformed leaves no trace: the
// text it appended is cut off again, so the reply holds exactly what the
// members before it gave (as when every value was checked before it was
// read; FuzzChunkSinglePass holds it to that on any bytes).
func (rp *reply) chunk(data []byte) (content, reasoning bool, err error) {
	if ok, c := rp.shape.take(data, &rp.content); ok {
		return c, false, nil
	}
	i := laxSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false, false, errMalformed
	}
	var f textFlags
	var ev apiEvent
	end, err := rp.chunkObject(data, i, &f, &ev)
	if err == nil && laxSpace(data, end) != len(data) {
		err = errMalformed
	}
	if err != nil {
		return f.content, f.reasoning, errMalformed
	}
	rp.apply(&ev, &f)
	if f.texts == 1 && !f.other {
		rp.shape.set(data, f.vs, f.end)
	}
	return f.content, f.reasoning, nil
}

// textFlags say whether a chunk carried non-empty content and reasoning,
// and what its walk found for chunkShape: texts content values, the last at
// [vs:end], and other, any member that gave the reply something else (or
// might have).
type textFlags struct {
	content, reasoning bool
	texts, vs, end     int
	other              bool
}

// contentAt appends the content value b[vs:end].
func (rp *reply) contentAt(b []byte, vs, end int, f *textFlags) {
	if appendText(&rp.content, b[vs:end]) {
		f.content = true
	}
	f.texts, f.vs, f.end = f.texts+1, vs, end
}

// chunkObject walks the chunk object at b[i] == '{' (laxObject at depth 0).
func (rp *reply) chunkObject(b []byte, i int, f *textFlags, ev *apiEvent) (int, error) {
	return laxMembers(b, i, func(key []byte, vs int) (end int, err error) {
		switch string(key) {
		case `"choices"`:
			if vs < len(b) && b[vs] == '[' {
				saved, nc, nr := *f, len(rp.content), len(rp.reasoning)
				if end, err = rp.choices(b, vs, f); err != nil {
					*f, rp.content, rp.reasoning = saved, rp.content[:nc], rp.reasoning[:nr]
				}
				return end, err
			}
		case `"usage"`:
			if end, err = laxSkip(b, vs, 0); err == nil && b[vs] == '{' {
				rp.readUsage(b[vs:end])
				f.other = true
			}
			return end, err
		case `"error"`:
			if end, err = laxSkip(b, vs, 0); err == nil {
				rp.readError(b[vs:end])
				f.other = true
			}
			return end, err
		case `"type"`, `"delta"`, `"response"`, `"message"`, `"output"`, `"content"`, `"data"`, `"text"`, `"result"`:
			if end, err = laxSkip(b, vs, 0); err == nil {
				rp.eventMember(key, b[vs:end], ev, f) // endpoint_parse.go
				f.other = true
			}
			return end, err
		}
		return laxSkip(b, vs, 0)
	})
}

// choices walks the choices array at b[i] == '[' (laxArray at depth 1).
func (rp *reply) choices(b []byte, i int, f *textFlags) (int, error) {
	return laxElements(b, i, func(vs int) (int, error) {
		if vs < len(b) && b[vs] == '{' {
			return rp.choice(b, vs, f)
		}
		return laxSkip(b, vs, 1)
	})
}

// choice walks one choice object at b[i] == '{' (laxObject at depth 2).
func (rp *reply) choice(b []byte, i int, f *textFlags) (int, error) {
	return laxMembers(b, i, func(key []byte, vs int) (end int, err error) {
		switch string(key) {
		case `"delta"`, `"message"`:
			if vs < len(b) && b[vs] == '{' {
				return rp.message(b, vs, f)
			}
		case `"text"`:
			if end, err = laxSkip(b, vs, 2); err == nil {
				rp.contentAt(b, vs, end, f)
			}
			return end, err
		}
		return laxSkip(b, vs, 2)
	})
}

// message walks a delta or message object at b[i] == '{' (laxObject at
// depth 3).
func (rp *reply) message(b []byte, i int, f *textFlags) (int, error) {
	return laxMembers(b, i, func(key []byte, vs int) (end int, err error) {
		if end, err = laxSkip(b, vs, 3); err != nil {
			return end, err
		}
		switch string(key) {
		case `"content"`:
			rp.contentAt(b, vs, end, f)
		case `"reasoning_content"`, `"reasoning"`:
			if appendText(&rp.reasoning, b[vs:end]) {
				f.reasoning = true
			}
			f.other = true
		}
		return end, nil
	})
}

// appendText appends the escaped content of the JSON string v to dst and
// reports whether it was non-empty; null and other values are ignored.
func appendText(dst *[]byte, v []byte) bool {
	if len(v) < 3 || v[0] != '"' {
		return false
	}
	*dst = append(*dst, v[1:len(v)-1]...)
	return true
}

// readUsage takes a usage object; the last one of a response wins, because
// some servers send zeros on every chunk and the counts on the last.
//
// The Responses and Messages APIs name the counts input_tokens and
// output_tokens (details: input_tokens_details, output_tokens_details;
// Anthropic's cache reads: cache_read_input_tokens). Anthropic's
// message_delta reports output tokens only: a usage with output_tokens and
// no input count keeps the input count of the usage before it.
func (rp *reply) readUsage(v []byte) {
	var u result.Usage
	var hasInput, hasOutputKey, hasTotal bool
	laxObject(v, 0, 1, func(k, v []byte) error {
		switch string(k) {
		case `"prompt_tokens"`, `"input_tokens"`:
			u.PromptTokens, hasInput = rp.countOf(k, v), true
		case `"completion_tokens"`:
			u.CompletionTokens = rp.countOf(k, v)
		case `"output_tokens"`:
			u.CompletionTokens, hasOutputKey = rp.countOf(k, v), true
		case `"total_tokens"`:
			u.TotalTokens, hasTotal = rp.countOf(k, v), true
		case `"cache_read_input_tokens"`:
			if string(v) != "null" {
				u.CachedTokens, u.HasCached = rp.countOf(k, v), true
			}
		case `"completion_tokens_details"`, `"output_tokens_details"`:
			if v[0] == '{' {
				laxObject(v, 0, 2, func(k, v []byte) error {
					if string(k) == `"reasoning_tokens"` {
						u.ReasoningTokens = rp.countOf(k, v)
					}
					return nil
				})
			}
		case `"prompt_tokens_details"`, `"input_tokens_details"`:
			// vLLM (--enable-prompt-tokens-details), SGLang and OpenAI
			// report the prompt tokens served from the prefix cache here.
			if v[0] == '{' {
				laxObject(v, 0, 2, func(k, v []byte) error {
					if string(k) == `"cached_tokens"` && string(v) != "null" {
						u.CachedTokens, u.HasCached = rp.countOf(k, v), true
					}
					return nil
				})
			}
		}
		return nil
	})
	if hasOutputKey {
		if !hasInput && rp.hasUsage {
			u.PromptTokens, u.CachedTokens, u.HasCached = rp.usage.PromptTokens, rp.usage.CachedTokens, rp.usage.HasCached
		}
		if !hasTotal {
			u.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
	}
	rp.usage, rp.hasUsage = u, true
}

// readError takes an error member: an object {message, type, code} or a
// string. The first error of a response wins.
func (rp *reply) readError(v []byte) {
	if rp.srvErr != nil || string(v) == "null" {
		return
	}
	e := &result.Error{Type: "ServerError"}
	switch v[0] {
	case '"':
		e.Message, _ = jsonx.Unquote(v)
	case '{':
		// An Anthropic error event wraps the error: {"type":"error",
		// "error":{"type","message"}}.
		jsonx.Fields(v, 0, func(k, inner []byte, _ int) error {
			if string(k) == `"error"` && inner[0] == '{' {
				v = inner
			}
			return nil
		})
		jsonx.Fields(v, 0, func(k, v []byte, _ int) error {
			switch string(k) {
			case `"message"`:
				if v[0] == '"' {
					e.Message, _ = jsonx.Unquote(v)
				}
			case `"type"`:
				if v[0] == '"' {
					if t, _ := jsonx.Unquote(v); t != "" {
						e.Type = t
					}
				}
			case `"code"`:
				if c, ok := jsonx.ParseUint(v); ok && c < 1000 {
					e.Code = int(c)
				}
			}
			return nil
		})
	default:
		e.Message = clip(v, 200)
	}
	e.Message, e.Type = clipText(e.Message, maxMessage), clipText(e.Type, 100)
	rp.srvErr = e
}

// maxMessage bounds a server's error message in a record.
const maxMessage = 1000

// clipText returns up to n bytes of s (cut at a character boundary) and
// "..." when it was longer.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// errorMessage extracts a readable message from an error response body:
// an OpenAI {"error":{"message"}}, a {"detail"} or {"message"} object, or
// the first 200 bytes of text.
func errorMessage(body []byte) string {
	i := jsonx.SkipSpace(body, 0)
	if i < len(body) && body[i] == '{' {
		var msg string
		jsonx.Fields(body, i, func(k, v []byte, _ int) error {
			switch string(k) {
			case `"error"`:
				var rp reply
				rp.readError(v)
				if rp.srvErr != nil && rp.srvErr.Message != "" {
					msg = rp.srvErr.Message
				}
			case `"detail"`, `"message"`:
				if msg == "" {
					if v[0] == '"' {
						msg, _ = jsonx.Unquote(v)
					} else {
						msg = clip(v, 200)
					}
				}
			}
			return nil
		})
		if msg != "" {
			return clipText(msg, maxMessage)
		}
	}
	return clip(body, 200)
}

// clip returns up to n bytes of b as text, invalid UTF-8 replaced.
func clip(b []byte, n int) string {
	suffix := ""
	if len(b) > n {
		b, suffix = b[:n], "..."
	}
	return strings.ToValidUTF8(string(b), "\uFFFD") + suffix
}

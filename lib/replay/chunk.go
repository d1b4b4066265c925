package replay

import (
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
	done      bool // "data: [DONE]" seen
}

func (rp *reply) reset() {
	*rp = reply{content: rp.content[:0], reasoning: rp.reasoning[:0]}
}

var doneMarker = []byte("[DONE]")

// errMalformed marks a response body that is not the JSON it should be.
var errMalformed = errors.New("malformed JSON")

// chunk reads one streamed chunk (an OpenAI chat.completion.chunk or
// text_completion object) and reports whether it carried non-empty
// content and non-empty reasoning text.
func (rp *reply) chunk(data []byte) (content, reasoning bool, err error) {
	i := laxSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false, false, errMalformed
	}
	end, err := laxObject(data, i, 0, func(key, v []byte) error {
		switch string(key) {
		case `"choices"`:
			if v[0] != '[' {
				return nil
			}
			_, err := laxArray(v, 0, 1, func(ch []byte) error {
				if ch[0] != '{' {
					return nil
				}
				_, err := laxObject(ch, 0, 2, func(k, v []byte) error {
					switch string(k) {
					case `"delta"`, `"message"`:
						if v[0] == '{' {
							c, r := rp.message(v)
							content, reasoning = content || c, reasoning || r
						}
					case `"text"`:
						if appendText(&rp.content, v) {
							content = true
						}
					}
					return nil
				})
				return err
			})
			return err
		case `"usage"`:
			if v[0] == '{' {
				rp.readUsage(v)
			}
		case `"error"`:
			rp.readError(v)
		}
		return nil
	})
	if err == nil && laxSpace(data, end) != len(data) {
		err = errMalformed
	}
	if err != nil {
		return content, reasoning, errMalformed
	}
	return content, reasoning, nil
}

// message reads a delta or message object (already walked by its parent).
func (rp *reply) message(v []byte) (content, reasoning bool) {
	laxObject(v, 0, 3, func(k, v []byte) error {
		switch string(k) {
		case `"content"`:
			content = appendText(&rp.content, v) || content
		case `"reasoning_content"`, `"reasoning"`:
			reasoning = appendText(&rp.reasoning, v) || reasoning
		}
		return nil
	})
	return content, reasoning
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
func (rp *reply) readUsage(v []byte) {
	var u result.Usage
	laxObject(v, 0, 1, func(k, v []byte) error {
		switch string(k) {
		case `"prompt_tokens"`:
			u.PromptTokens = uintOf(v)
		case `"completion_tokens"`:
			u.CompletionTokens = uintOf(v)
		case `"total_tokens"`:
			u.TotalTokens = uintOf(v)
		case `"completion_tokens_details"`:
			if v[0] == '{' {
				laxObject(v, 0, 2, func(k, v []byte) error {
					if string(k) == `"reasoning_tokens"` {
						u.ReasoningTokens = uintOf(v)
					}
					return nil
				})
			}
		case `"prompt_tokens_details"`:
			// vLLM (--enable-prompt-tokens-details), SGLang and OpenAI
			// report the prompt tokens served from the prefix cache here.
			if v[0] == '{' {
				laxObject(v, 0, 2, func(k, v []byte) error {
					if string(k) == `"cached_tokens"` && v[0] >= '0' && v[0] <= '9' {
						u.CachedTokens, u.HasCached = uintOf(v), true
					}
					return nil
				})
			}
		}
		return nil
	})
	rp.usage, rp.hasUsage = u, true
}

func uintOf(v []byte) int64 {
	x, ok := jsonx.ParseUint(v)
	if !ok || x > 1<<62 {
		return 0
	}
	return int64(x)
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

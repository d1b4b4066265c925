package mock

import (
	"errors"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// request holds the members of a completion request the mock acts on. The
// slices alias the body.
type request struct {
	model        []byte // JSON string literal, or nil
	stream       bool
	includeUsage bool
	maxTokens    int64  // 0 = not given
	input        []byte // the messages array (chat) or the prompt value (completions)
}

// parseRequest finds the members of body that the mock needs. chat selects
// which input member is required.
func parseRequest(body []byte, chat bool) (request, error) {
	if chat {
		return parseAPIRequest(body, apiChat)
	}
	return parseAPIRequest(body, apiCompletions)
}

// parseAPIRequest finds the members of a request to the api endpoint
// (api.go): its input member is messages (chat, messages), prompt
// (completions) or input (responses, embeddings).
func parseAPIRequest(body []byte, api string) (request, error) {
	chat := api == apiChat || api == apiMessages
	var q request
	i := jsonx.SkipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return q, errors.New("request body is not a JSON object")
	}
	end, err := jsonx.Fields(body, i, func(key, v []byte, _ int) error {
		switch string(key) {
		case `"model"`:
			if v[0] != '"' {
				return errors.New("model: not a string")
			}
			q.model = v
		case `"stream"`:
			q.stream = string(v) == "true"
		case `"max_tokens"`, `"max_completion_tokens"`, `"max_output_tokens"`:
			if string(v) == "null" {
				return nil
			}
			n, ok := jsonx.ParseUint(v)
			if !ok || n == 0 || n > 1<<24 {
				return errors.New(string(key[1:len(key)-1]) + ": want an integer in [1, 16777216]")
			}
			if q.maxTokens == 0 || string(key) == `"max_tokens"` {
				q.maxTokens = int64(n)
			}
		case `"stream_options"`:
			if v[0] != '{' {
				return nil
			}
			_, err := jsonx.Fields(v, 0, func(k, v []byte, _ int) error {
				if string(k) == `"include_usage"` {
					q.includeUsage = string(v) == "true"
				}
				return nil
			})
			return err
		case `"messages"`:
			if chat {
				if v[0] != '[' {
					return errors.New("messages: not an array")
				}
				q.input = v
			}
		case `"input"`:
			if api == apiResponses || api == apiEmbeddings {
				if v[0] != '"' && v[0] != '[' {
					return errors.New("input: not a string or an array")
				}
				q.input = v
			}
		case `"prompt"`:
			if api == apiCompletions {
				if v[0] != '"' && v[0] != '[' {
					return errors.New("prompt: not a string or an array")
				}
				q.input = v
			}
		}
		return nil
	})
	if err != nil {
		return q, err
	}
	if jsonx.SkipSpace(body, end) != len(body) {
		return q, errors.New("data after the request object")
	}
	if q.input == nil {
		if api == apiResponses || api == apiEmbeddings {
			return q, errors.New("input: required")
		}
		if chat {
			return q, errors.New("messages: required")
		}
		return q, errors.New("prompt: required")
	}
	return q, nil
}

// inputTexts calls fn with every text of a messages array (string contents
// and "text" parts) or of a prompt (a string or an array of strings).
func inputTexts(input []byte, fn func(string)) {
	str := func(v []byte) {
		if len(v) > 0 && v[0] == '"' {
			if s, err := jsonx.Unquote(v); err == nil {
				fn(s)
			}
		}
	}
	switch input[0] {
	case '"':
		str(input)
	case '[':
		jsonx.Elements(input, 0, func(_ int, el []byte, _ int) error {
			switch el[0] {
			case '"': // a prompt array
				str(el)
			case '{': // a chat message
				jsonx.Fields(el, 0, func(k, v []byte, _ int) error {
					if string(k) != `"content"` {
						return nil
					}
					switch v[0] {
					case '"':
						str(v)
					case '[':
						jsonx.Elements(v, 0, func(_ int, part []byte, _ int) error {
							if part[0] == '{' {
								jsonx.Fields(part, 0, func(k, v []byte, _ int) error {
									if string(k) == `"text"` {
										str(v)
									}
									return nil
								})
							}
							return nil
						})
					}
					return nil
				})
			}
			return nil
		})
	}
}

// unknownModel reports, with Config.StrictModel, that model (a request's
// JSON string literal, nil when it names none) is not the one served,
// and returns the name it gives.
func (s *Server) unknownModel(model []byte) (string, bool) {
	if !s.cfg.StrictModel || model == nil {
		return "", false
	}
	name, err := jsonx.Unquote(model)
	if err != nil || name != s.cfg.Model {
		return name, true
	}
	return "", false
}

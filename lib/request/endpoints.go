package request

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/record"
)

// The endpoints beyond chat and completions, formatted as the Python
// aiperf's endpoint classes do (src/aiperf/endpoints: openai_embeddings,
// openai_responses, anthropic_messages), key order included:
//
// embeddings: model, input (a list: the prompt, or the text of every
// message of a messages record: a batch), extras. No stream, no max tokens.
// responses: input (the messages array; a prompt becomes one user message
// item), model, stream, max_output_tokens, tools, extras.
// messages (Anthropic): messages, model, max_tokens (the record's, else
// 16384: the API requires one), stream, tools, extras.
//
// None of them has stream_options: the Responses API reports usage in its
// response.completed event and the Messages API in message_start and
// message_delta, unasked.
//
// raw: payload records only, stored as they came, for the path replay's
// --path gives (aiperf's raw endpoint); a formatted record is an error.

// DefaultMessagesMaxTokens is the max_tokens of a messages body whose
// record sets none (aiperf's MessagesEndpoint.DEFAULT_MAX_TOKENS).
const DefaultMessagesMaxTokens = 16384

// Refines reports whether a verbatim body that Inspect says is for the
// claimed endpoint may be for endpoint: an Anthropic messages body has
// "messages" as a chat body does, and a responses or embeddings body has
// "input", which Inspect names no endpoint for. The store's metadata then
// says which it is.
func Refines(endpoint, claimed string) bool {
	switch endpoint {
	case Raw:
		return true // whatever the body says, it goes to --path as it is
	case Messages:
		return claimed == Chat
	case Responses, Embeddings:
		return claimed == ""
	}
	return false
}

// validateMore checks the options of the endpoints in this file.
func (o *Options) validateMore() error {
	switch {
	case o.Endpoint == Embeddings && o.Streaming:
		return fmt.Errorf("%w: the embeddings endpoint does not stream", ErrUsage)
	case o.IncludeUsage || o.PerChunkUsage:
		return fmt.Errorf("%w: the %s endpoint reports usage unasked; it takes no stream_options", ErrUsage, o.Endpoint)
	}
	return nil
}

// moreMembers lists the endpoint's own members of a prompt or messages
// record (extras follow in members).
func (f *Formatter) moreMembers(fs []member, rec *record.Record) ([]member, error) {
	switch f.o.Endpoint {
	case Embeddings:
		fs = append(fs, member{key: "model", value: f.model})
		if rec.Kind == record.KindPrompt {
			fs = append(fs, member{key: "input", pre: "[", value: rec.Raw, post: "]"})
		} else {
			batch, err := appendTexts(f.batch[:0], rec.Raw)
			if err != nil {
				return nil, &FieldError{Field: "messages", Err: err}
			}
			f.batch = batch
			fs = append(fs, member{key: "input", value: batch})
		}
	case Responses:
		if rec.Kind == record.KindPrompt {
			fs = append(fs, member{key: "input", pre: `[{"role":"user","content":`, value: rec.Raw, post: `,"type":"message"}]`})
		} else {
			fs = append(fs, member{key: "input", value: rec.Raw})
		}
		fs = append(fs, member{key: "model", value: f.model}, member{key: "stream", value: boolJSON(f.o.Streaming)})
		if rec.HasMaxTokens {
			fs = append(fs, member{key: "max_output_tokens", value: f.num})
		}
		if rec.Tools != nil {
			fs = append(fs, member{key: "tools", value: rec.Tools})
		}
	case Raw:
		return nil, fmt.Errorf("the raw endpoint takes payload records only (verbatim bodies), got %s", rec.Kind)
	case Messages:
		fs = append(fs, messagesMember(rec))
		if !rec.HasMaxTokens {
			f.num = strconv.AppendUint(f.num[:0], DefaultMessagesMaxTokens, 10)
		}
		fs = append(fs, member{key: "model", value: f.model}, member{key: "max_tokens", value: f.num},
			member{key: "stream", value: boolJSON(f.o.Streaming)})
		if rec.Tools != nil {
			fs = append(fs, member{key: "tools", value: rec.Tools})
		}
	}
	return fs, nil
}

// bodyMaxTokens is the output-token limit a formatted body sets before
// extras: none for embeddings, the default for messages.
func (f *Formatter) bodyMaxTokens(rec *record.Record) (uint32, bool) {
	switch {
	case f.o.Endpoint == Embeddings:
		return 0, false
	case f.o.Endpoint == Messages && !rec.HasMaxTokens:
		return DefaultMessagesMaxTokens, true
	case f.o.Endpoint == Completions && rec.MaxTokens == 0:
		return 0, false // no cap member (members)
	}
	return rec.MaxTokens, rec.HasMaxTokens
}

// errNoText reports a messages array without a text.
var errNoText = errors.New("no text to embed")

// appendTexts appends to dst a JSON array of the texts of a messages
// array: each message's string content, or the text of each of its
// "text" parts, in order, as the escaped literals they are.
func appendTexts(dst, messages []byte) ([]byte, error) {
	dst = append(dst, '[')
	n := 0
	add := func(v []byte) {
		if len(v) > 2 && v[0] == '"' {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, v...)
			n++
		}
	}
	_, err := jsonx.Elements(messages, jsonx.SkipSpace(messages, 0), func(_ int, msg []byte, _ int) error {
		if msg[0] != '{' {
			return nil
		}
		_, err := jsonx.Fields(msg, 0, func(k, v []byte, _ int) error {
			if string(k) != `"content"` {
				return nil
			}
			switch v[0] {
			case '"':
				add(v)
			case '[':
				jsonx.Elements(v, 0, func(_ int, part []byte, _ int) error {
					if part[0] == '{' {
						jsonx.Fields(part, 0, func(k, v []byte, _ int) error {
							if string(k) == `"text"` {
								add(v)
							}
							return nil
						})
					}
					return nil
				})
			}
			return nil
		})
		return err
	})
	if err != nil {
		return dst, err
	}
	if n == 0 {
		return dst, errNoText
	}
	return append(dst, ']'), nil
}

package request

import "github.com/aiperf/toolkit/lib/jsonx"

// Claims are what a verbatim body says about the settings a store's
// metadata records for its bodies: the endpoint it is for, its model and
// whether it asks for a streamed answer.
type Claims struct {
	// Endpoint is Chat for a body with a "messages" member, Completions
	// for one with a "prompt" member and no "messages", "" for neither.
	Endpoint string
	// Model is the body's "model" string; HasModel reports that it has one.
	Model    string
	HasModel bool
	// Stream reports "stream": true. An absent member, or any other value,
	// asks for one JSON answer (the OpenAI API's default).
	Stream bool
}

// Inspect reads the top-level members of a verbatim body that Claims
// describes. A body that is not a JSON object claims nothing.
func Inspect(body []byte) Claims {
	var c Claims
	var messages, prompt bool
	jsonx.Fields(body, jsonx.SkipSpace(body, 0), func(k, v []byte, _ int) error {
		switch string(k) {
		case `"messages"`:
			messages = true
		case `"prompt"`:
			prompt = true
		case `"stream"`:
			c.Stream = string(v) == "true"
		case `"model"`:
			if len(v) > 0 && v[0] == '"' {
				if s, err := jsonx.Unquote(v); err == nil {
					c.Model, c.HasModel = s, true
				}
			}
		}
		return nil
	})
	switch {
	case messages:
		c.Endpoint = Chat
	case prompt:
		c.Endpoint = Completions
	}
	return c
}

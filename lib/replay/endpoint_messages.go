package replay

// AnthropicVersion is the anthropic-version header sent with every
// request to the messages endpoint unless a --header sets it (the Messages
// API refuses a request without one).
const AnthropicVersion = "2023-06-01"

// anthropicHeaders appends the headers of the Anthropic Messages API: the
// API key as x-api-key (not as a bearer token) and anthropic-version,
// each unless a user header already has it.
func (r *runner) anthropicHeaders(b []byte, has func(string) bool) []byte {
	if r.o.APIKey != "" && !has("x-api-key") && !has("authorization") {
		b = append(b, "x-api-key: "...)
		b = append(b, r.o.APIKey...)
		b = append(b, "\r\n"...)
	}
	if !has("anthropic-version") {
		b = append(b, "anthropic-version: "+AnthropicVersion+"\r\n"...)
	}
	return b
}

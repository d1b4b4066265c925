package replay

import (
	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/tokenizer"
)

// countText counts the tokens of escaped JSON string content (as
// accumulated from a response). This runs after the request's end time is
// taken, so it never lands inside a measured latency.
func countText(t *tokenizer.Tokenizer, escaped []byte) int {
	if len(escaped) == 0 {
		return 0
	}
	lit := make([]byte, 0, len(escaped)+2)
	lit = append(append(append(lit, '"'), escaped...), '"')
	s, err := jsonx.Unquote(lit)
	if err != nil {
		return 0
	}
	return len(t.Encode(s))
}

package request

import (
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// capPayload appends to parts the pieces of a verbatim payload body whose
// output-token cap is n, as the Python aiperf overrides a raw body's cap
// when its turn has max_tokens (a trace row's output_length, or the
// --max-osl cap): every cap member present (max_tokens,
// max_completion_tokens, max_output_tokens) takes n; with none, the body
// gets max_output_tokens when it is Responses-style (it has "input"), else
// max_tokens. The other bytes stay as they are, aliased, not copied; a body
// whose caps already say n is appended whole. A body that is not a JSON
// object (the tokenizer refuses those) is appended whole as well.
func (f *Formatter) capPayload(parts [][]byte, raw []byte, n uint32) [][]byte {
	type span struct{ from, to int }
	var caps []span
	input, same := false, true
	start := jsonx.SkipSpace(raw, 0)
	end, err := jsonx.Fields(raw, start, func(k, v []byte, off int) error {
		switch string(k) {
		case `"input"`:
			input = true
		case `"max_tokens"`, `"max_completion_tokens"`, `"max_output_tokens"`:
			caps = append(caps, span{off, off + len(v)})
			if x, ok := jsonx.ParseUint(v); !ok || x != uint64(n) || v[0] == '0' {
				same = false
			}
		}
		return nil
	})
	if err != nil || len(caps) > 0 && same {
		return append(parts, raw)
	}
	f.capNum = strconv.AppendUint(f.capNum[:0], uint64(n), 10)
	if len(caps) == 0 {
		key := `"max_tokens":`
		if input {
			key = `"max_output_tokens":`
		}
		f.capIns = f.capIns[:0]
		if jsonx.SkipSpace(raw, start+1) != end-1 { // members before: a comma
			f.capIns = append(f.capIns, ',')
		}
		f.capIns = append(append(f.capIns, key...), f.capNum...)
		return append(parts, raw[:end-1], f.capIns, raw[end-1:])
	}
	at := 0
	for _, c := range caps {
		parts = append(parts, raw[at:c.from], f.capNum)
		at = c.to
	}
	return append(parts, raw[at:])
}

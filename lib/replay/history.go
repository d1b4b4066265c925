package replay

import (
	"bytes"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/store"
)

// History modes.
const (
	HistoryAuto = "auto" // splice when the store's turns hold only their own messages
	HistoryOn   = "on"   // always splice
	HistoryOff  = "off"  // send every body as stored
)

// history carries a conversation across the turns of one session: the
// messages of the turns sent so far, each followed by the assistant's
// actual reply, as the comma-separated elements of a JSON array. Turn k is
// sent as its stored body with these elements inserted at the front of its
// "messages" array; the rest of the body goes out as stored, straight from
// the mapping.
//
// This is the Python aiperf's default for multi-turn conversations (the
// multi_turn format, and mooncake sessions in context mode
// deltas_without_responses, message_mode "delta"): the server sees the
// whole conversation with its own earlier answers. Sessions whose rows
// already hold the whole conversation (context mode
// message_array_with_responses: mooncake "messages" rows in the default
// history mode) and verbatim payloads are sent as stored. The store
// records the mode per session when the trace said or implied it
// (store.FlagContextDeltas, store.FlagContextMessageArray); for a session
// without one, mode auto takes a session as whole-conversation when the
// messages of its second turn begin with those of its first.
//
// The record of a spliced turn counts the tokens of the body sent, not the
// turn's own: the store's input tokens of every turn so far plus the
// output tokens of every reply (so that usage.prompt_tokens is compared
// with the prompt the server got). When one of them is unknown, so is the
// count (0).
type history struct {
	mode  string
	off   bool   // decided: send this session's bodies as stored
	elems []byte // the elements so far, without brackets
	first int    // length of the first turn's messages within elems

	tokens    int64 // tokens of elems: the turns' input tokens and the replies' output tokens
	uncounted bool  // some part of elems has no known token count
	spliced   bool  // the last parts call put elems in front of the turn's messages
}

// messagesSpan returns the extent [start, end) of the top-level "messages"
// array of a request body, or ok=false.
func messagesSpan(body []byte) (start, end int, ok bool) {
	i := jsonx.SkipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return 0, 0, false
	}
	_, err := jsonx.WalkFields(body, i, func(key []byte, off int) (int, error) {
		e, err := jsonx.Skip(body, off)
		if err == nil && !ok && string(key) == `"messages"` && body[off] == '[' {
			start, end, ok = off, e, true
		}
		return e, err
	})
	if err != nil {
		return 0, 0, false
	}
	return start, end, ok
}

// inner returns the elements of the array at body[start:end], without the
// brackets and surrounding white space.
func inner(body []byte, start, end int) []byte {
	return bytes.TrimSpace(body[start+1 : end-1])
}

// parts returns the pieces of turn's body to send, appended to dst: the
// body itself when nothing is spliced. e is the turn's index entry.
func (h *history) parts(dst [][]byte, body []byte, e store.Entry) [][]byte {
	if h == nil {
		return append(dst, body)
	}
	h.spliced = false
	if h.off || e.Turn == 0 || len(h.elems) == 0 {
		return append(dst, body)
	}
	start, end, ok := messagesSpan(body)
	if !ok {
		h.off = true
		return append(dst, body)
	}
	own := inner(body, start, end)
	if h.mode == HistoryAuto && e.Turn == 1 && h.first > 0 && bytes.HasPrefix(own, h.elems[:h.first]) {
		h.off = true // the stored turns already carry the conversation
		return append(dst, body)
	}
	h.spliced = true
	dst = append(dst, body[:start+1], h.elems)
	if len(own) > 0 {
		dst = append(dst, comma)
	}
	return append(dst, body[start+1:])
}

var comma = []byte(",")

// inputTokens returns the input tokens of the body the last parts call
// gave, own being the turn's own (the store's count; 0 = unknown).
func (h *history) inputTokens(own int64) int64 {
	if h == nil || !h.spliced {
		return own
	}
	if h.uncounted || own == 0 {
		return 0
	}
	return h.tokens + own
}

// add records a completed turn: its own stored messages and the reply
// (escaped JSON string content) of replyTokens output tokens (counted
// false: unknown).
func (h *history) add(body []byte, e store.Entry, replyText []byte, replyTokens int64, counted bool) {
	if h == nil || h.off {
		return
	}
	h.tokens += int64(e.InputTokens) + replyTokens
	h.uncounted = h.uncounted || e.InputTokens == 0 || !counted
	start, end, ok := messagesSpan(body)
	if !ok {
		h.off = true
		return
	}
	own := inner(body, start, end)
	if len(own) > 0 {
		if len(h.elems) > 0 {
			h.elems = append(h.elems, ',')
		}
		h.elems = append(h.elems, own...)
	}
	if e.Turn == 0 {
		h.first = len(h.elems)
	}
	if len(h.elems) > 0 {
		h.elems = append(h.elems, ',')
	}
	h.elems = append(h.elems, `{"role":"assistant","content":"`...)
	h.elems = append(h.elems, replyText...)
	h.elems = append(h.elems, `"}`...)
}

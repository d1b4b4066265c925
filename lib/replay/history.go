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
type history struct {
	mode  string
	off   bool   // decided: send this session's bodies as stored
	elems []byte // the elements so far, without brackets
	first int    // length of the first turn's messages within elems
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
	if h == nil || h.off || e.Turn == 0 || len(h.elems) == 0 {
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
	dst = append(dst, body[:start+1], h.elems)
	if len(own) > 0 {
		dst = append(dst, comma)
	}
	return append(dst, body[start+1:])
}

var comma = []byte(",")

// add records a completed turn: its own stored messages and the reply
// (escaped JSON string content).
func (h *history) add(body []byte, e store.Entry, replyText []byte) {
	if h == nil || h.off {
		return
	}
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

package pack

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/store"
)

// Summary is what aiperf-pack stat --json says of a store's records and
// bodies beyond its header: the session tree and the bytes sent.
type Summary struct {
	Records        int   `json:"records"`
	Sessions       int   `json:"sessions"`
	Subagents      int   `json:"subagents"` // child sessions that are subagents (not chains)
	Chains         int   `json:"chains"`    // child sessions of parallel chains
	DistinctBlocks int   `json:"distinct_blocks"`
	BodyBytes      int64 `json:"body_bytes"` // the bytes the bodies send, all records
	FileBytes      int64 `json:"file_bytes"`
	PromptTokens   int64 `json:"-"` // the records' input tokens
}

// Summarize reads r's index (and its tree) into a Summary.
func Summarize(r *store.Reader) (Summary, error) {
	s := Summary{Records: r.Len(), Sessions: r.NumSessions(), DistinctBlocks: r.NumBlocks(), FileBytes: r.Size()}
	tree, err := r.Tree()
	if err != nil {
		return s, err
	}
	for _, n := range tree {
		if n.Agent == "chain" {
			s.Chains++
		} else {
			s.Subagents++
		}
	}
	for i := range r.Len() {
		s.BodyBytes += int64(r.BodyLen(i))
		s.PromptTokens += int64(r.Entry(i).InputTokens)
	}
	return s, nil
}

// DumpMeta writes records from..to-1 as JSON lines {"record", "session_id",
// "turn", "parent_session", "input_tokens", "body"}, the body composed as
// it is sent (a JSON value; a body that is not JSON, as a string).
func DumpMeta(w io.Writer, r *store.Reader, from, to int) error {
	tree, err := r.Tree()
	if err != nil {
		return err
	}
	parent := map[uint32]uint32{}
	for _, n := range tree {
		parent[n.Session] = n.Parent
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var b []byte
	for i := from; i < to; i++ {
		e := r.Entry(i)
		b = append(b[:0], `{"record":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"session_id":`...)
		b = jsonx.AppendString(b, r.SessionID(e.Session))
		b = append(b, `,"turn":`...)
		b = strconv.AppendUint(b, uint64(e.Turn), 10)
		b = append(b, `,"parent_session":`...)
		if p, ok := parent[e.Session]; ok {
			b = jsonx.AppendString(b, r.SessionID(p))
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"input_tokens":`...)
		b = strconv.AppendUint(b, uint64(e.InputTokens), 10)
		b = append(b, `,"body":`...)
		body := r.Payload(i)
		if json.Valid(body) {
			b = append(b, body...)
		} else {
			b = jsonx.AppendString(b, string(body))
		}
		b = append(b, "}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

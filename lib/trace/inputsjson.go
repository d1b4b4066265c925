package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// inputsJSONDecoder reads aiperf's own inputs.json document,
// {"data": [{"session_id": "...", "payloads": [{...}, ...]}, ...]}: each
// entry is a session and each payload a turn sent verbatim.
//
// Errors carry the line of the offending value in the document; rows carry
// the 1-based ordinal of the payload as Line.
type inputsJSONDecoder struct {
	name string
	r    io.Reader
}

func (d *inputsJSONDecoder) load() ([]*Row, error) {
	doc, err := io.ReadAll(d.r)
	if err != nil {
		return nil, ioError(d.name, 0, err)
	}
	return parseInputsJSON(d.name, doc)
}

// lineCounter maps increasing byte offsets of a document to line numbers.
type lineCounter struct {
	doc  []byte
	off  int
	line int64
}

func (c *lineCounter) at(off int) int64 {
	if off < c.off { // not expected; restart
		c.off, c.line = 0, 1
	}
	c.line += int64(bytes.Count(c.doc[c.off:off], []byte{'\n'}))
	c.off = off
	return c.line
}

func parseInputsJSON(name string, doc []byte) ([]*Row, error) {
	lc := &lineCounter{doc: doc, line: 1}
	start := jsonx.SkipSpace(doc, 0)
	if start == len(doc) {
		return nil, &Error{File: name, Err: fmt.Errorf("empty document; want {\"data\": [...]}")}
	}
	if fe, off := checkText(doc); fe != nil {
		return nil, &Error{File: name, Line: lc.at(off), Field: fe.field, Err: errors.New(fe.msg)}
	}
	if kind(doc[start:]) != kindObject {
		return nil, &Error{File: name, Line: lc.at(start), Err: fmt.Errorf("document must be a JSON object with \"data\", got %s", kind(doc[start:]))}
	}
	var data []byte
	dataOff := 0
	_ = members(doc, func(k string, v []byte, off int) error {
		if k == "data" {
			data, dataOff = v, off
		}
		return nil
	})
	if data == nil {
		return nil, &Error{File: name, Line: lc.at(start), Field: "data", Err: fmt.Errorf("required")}
	}
	if kind(data) != kindArray {
		return nil, &Error{File: name, Line: lc.at(dataOff), Field: "data", Err: fmt.Errorf("must be an array, got %s", kind(data))}
	}

	var rows []*Row
	seen := map[string]int64{}
	err := elements(data, func(i int, entry []byte, off int) error {
		off += dataOff
		field := fmt.Sprintf("data[%d]", i)
		fail := func(f string, l int64, format string, args ...any) error {
			return &Error{File: name, Line: l, Field: f, Err: fmt.Errorf(format, args...)}
		}
		if kind(entry) != kindObject {
			return fail(field, lc.at(off), "must be an object, got %s", kind(entry))
		}
		var sid, payloads []byte
		sidOff, plOff := 0, 0
		_ = members(entry, func(k string, v []byte, o int) error {
			switch k {
			case "session_id":
				sid, sidOff = v, off+o
			case "payloads":
				payloads, plOff = v, off+o
			}
			return nil
		})
		if sid == nil {
			return fail(field+".session_id", lc.at(off), "required")
		}
		sessionID, fe := stringValue(field+".session_id", sid)
		if fe != nil {
			return fail(fe.field, lc.at(sidOff), "%s", fe.msg)
		}
		if l, dup := seen[sessionID]; dup {
			return fail(field+".session_id", lc.at(sidOff), "duplicate session %q (first at line %d)", sessionID, l)
		}
		seen[sessionID] = lc.at(sidOff)
		if payloads == nil {
			return fail(field+".payloads", lc.at(off), "required")
		}
		if kind(payloads) != kindArray {
			return fail(field+".payloads", lc.at(plOff), "must be an array of objects, got %s", kind(payloads))
		}
		turn := 0
		err := elements(payloads, func(j int, p []byte, o int) error {
			if kind(p) != kindObject {
				return fail(fmt.Sprintf("%s.payloads[%d]", field, j), lc.at(plOff+o), "must be an object, got %s", kind(p))
			}
			lc.at(plOff + o)
			// doc is owned by this decoder and never reused: a payload that
			// is on one line already is not copied.
			payload := json.RawMessage(p[:len(p):len(p)])
			if !jsonx.IsCompact(p) {
				payload = jsonx.AppendCompact(nil, p)
			}
			rows = append(rows, &Row{
				Source: name, Line: int64(len(rows) + 1), Seq: int64(len(rows)),
				SessionID: sessionID, Turn: turn, Payload: payload,
			})
			turn++
			return nil
		})
		if err != nil {
			return err
		}
		if turn == 0 {
			return fail(field+".payloads", lc.at(plOff), "must hold at least one payload")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

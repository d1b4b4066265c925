package replay

import "bytes"

// sseParser interprets a text/event-stream body as the WHATWG HTML standard
// specifies ("9.2.6 Interpreting an event stream"), incrementally: the body
// may arrive in pieces split anywhere, even inside a CRLF.
//
//   - Lines end with CRLF, LF or CR.
//   - A line starting with ':' is a comment; a line "field:value" sets a
//     field (one space after the colon is dropped); a line without a colon
//     is a field with an empty value.
//   - "data" lines accumulate, joined by LF; "event" sets the event type;
//     "id" and "retry" are read and ignored; other fields are ignored.
//   - An empty line dispatches the event if any data line was seen, then
//     resets the data and the type. A data line with an empty value counts:
//     "data:" then a blank line is an event with empty data (the standard
//     dispatches it; the request reads it as a keep-alive, never as a
//     chunk).
//   - A byte order mark at the very start is skipped; an event still open
//     when the body ends is discarded.
//
// The common event, one data line that arrived within one read, is handed
// to the callback as a slice of the read buffer, without a copy.
type sseParser struct {
	started bool   // the first bytes were seen (BOM check done)
	skipLF  bool   // the last piece ended with CR: a leading LF belongs to that line end
	line    []byte // a line carried over from the previous piece
	carried bool   // line holds a partial line
	data    []byte // the data of the current event when it is owned
	alias   []byte // the data of the current event as a slice of the current piece
	ndata   int    // data lines in the current event
	event   []byte // the event type of the current event
	max     int    // bound of a line and of an event's data; 0 means maxSSELine
}

// maxSSELine bounds one line and the data of one event (a data line holds
// one JSON chunk; a long-context reply's whole-text chunk stays far below
// this). A stream's own limit (max) may be lower.
const maxSSELine = 64 << 20

// errTooLarge is a response that would hold more than its limit.
type errTooLarge struct{ msg string }

func (e *errTooLarge) Error() string { return e.msg }

func (p *sseParser) limit() int {
	if p.max > 0 {
		return p.max
	}
	return maxSSELine
}

func (p *sseParser) tooLong(what string) error {
	return &errTooLarge{"server-sent event " + what + " longer than " + sizeString(int64(p.limit()))}
}

// reset prepares the parser for a new stream, keeping its buffers.
func (p *sseParser) reset() {
	*p = sseParser{line: p.line[:0], data: p.data[:0], event: p.event[:0], max: p.max}
}

// feed parses the next piece of the body. emit is called for every
// dispatched event with its type (empty for the default "message") and
// data; both slices are valid only during the call. An error from emit
// stops the parse and is returned.
func (p *sseParser) feed(b []byte, emit func(event, data []byte) error) error {
	if !p.started && !p.carried {
		if len(b) == 0 {
			return nil
		}
		// A BOM may itself be split across pieces: then the start is
		// carried as a partial line and checked once the line is whole.
		if bytes.HasPrefix(b, bom) {
			b = b[len(bom):]
			p.started = true
		} else if len(b) >= len(bom) || !bytes.HasPrefix(bom, b) {
			p.started = true
		}
	}
	if p.skipLF && len(b) > 0 {
		if b[0] == '\n' {
			b = b[1:]
		}
		p.skipLF = false
	}
	hasCR := bytes.IndexByte(b, '\r') >= 0
	for len(b) > 0 {
		var i int
		if hasCR {
			i = bytes.IndexAny(b, "\r\n")
		} else {
			i = bytes.IndexByte(b, '\n')
		}
		if i < 0 {
			if len(p.line)+len(b) > p.limit() {
				return p.tooLong("line")
			}
			p.line = append(p.line, b...)
			p.carried = true
			break
		}
		line := b[:i]
		owned := false
		if p.carried {
			if len(p.line)+len(line) > p.limit() {
				return p.tooLong("line")
			}
			p.line = append(p.line, line...)
			line, owned = p.line, true
			p.carried = false
		}
		if b[i] == '\r' {
			if i+1 < len(b) {
				if b[i+1] == '\n' {
					i++
				}
			} else {
				p.skipLF = true
			}
		}
		b = b[i+1:]
		if !p.started {
			// Only reachable when a BOM was split: the assembled line
			// starts with the bytes seen so far.
			line = bytes.TrimPrefix(line, bom)
			p.started = true
		}
		if err := p.processLine(line, owned, emit); err != nil {
			return err
		}
		if owned {
			p.line = p.line[:0]
		}
	}
	// The piece is about to be reused: own any data that aliases it.
	if p.alias != nil {
		p.data = append(p.data[:0], p.alias...)
		p.alias = nil
	}
	return nil
}

var bom = []byte("\xef\xbb\xbf")

func (p *sseParser) processLine(line []byte, owned bool, emit func(event, data []byte) error) error {
	if len(line) == 0 {
		if p.ndata == 0 {
			p.event = p.event[:0]
			return nil
		}
		data := p.alias
		if data == nil {
			data = p.data
		}
		err := emit(p.event, data)
		p.ndata, p.alias, p.data, p.event = 0, nil, p.data[:0], p.event[:0]
		return err
	}
	if line[0] == ':' {
		return nil
	}
	field, value := line, line[:0]
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		field, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		switch {
		case p.ndata == 0 && !owned:
			p.alias = value
		case p.ndata == 0:
			p.data = append(p.data[:0], value...)
		default:
			if len(p.alias)+len(p.data)+1+len(value) > p.limit() {
				return p.tooLong("data")
			}
			if p.alias != nil {
				p.data = append(p.data[:0], p.alias...)
				p.alias = nil
			}
			p.data = append(p.data, '\n')
			p.data = append(p.data, value...)
		}
		p.ndata++
	case "event":
		p.event = append(p.event[:0], value...)
	}
	return nil
}

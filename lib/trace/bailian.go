package trace

import (
	"cmp"
	"io"
	"slices"
	"strconv"
)

// bailianDecoder reads a whole Bailian trace, rebuilds its sessions from the
// parent_chat_id links and returns them session by session (in order of
// first appearance), each sorted by turn.
type bailianDecoder struct {
	name string
	lr   *lineReader
	filt *filter
}

type bailianRec struct {
	row    *Row
	chatID int64
	parent int64
	turn   int64
}

func (d *bailianDecoder) load() ([]*Row, error) {
	var recs []bailianRec
	var seq int64
	for {
		rec, line, err := d.lr.Record()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, ioError(d.name, line, err)
		}
		r, err := parseBailian(rec)
		if err != nil {
			return nil, at(d.name, line, err)
		}
		r.row.Source, r.row.Line, r.row.Seq = d.name, line, seq
		seq++
		// aiperf filters before grouping, so a dropped parent splits its session.
		if d.filt.keep(r.row) {
			recs = append(recs, r)
		}
	}
	return groupBailian(recs), nil
}

// groupBailian assigns every record to the session of the root reached by
// walking parent links (stopping at -1, a missing parent, a self link or a
// cycle, with path compression), exactly as aiperf's loader does.
func groupBailian(recs []bailianRec) []*Row {
	byID := make(map[int64]int, len(recs)) // chat_id → index of its last record
	for i, r := range recs {
		byID[r.chatID] = i
	}
	rootOf := make(map[int64]int64)
	findRoot := func(id int64) int64 {
		if root, ok := rootOf[id]; ok {
			return root
		}
		var path []int64
		seen := map[int64]bool{}
		cur := id
		for {
			i, ok := byID[cur]
			if !ok || recs[i].parent == -1 || seen[cur] {
				break
			}
			seen[cur] = true
			parent := recs[i].parent
			if _, ok := byID[parent]; !ok || parent == cur {
				break
			}
			path = append(path, cur)
			cur = parent
		}
		for _, n := range path {
			rootOf[n] = cur
		}
		rootOf[id] = cur
		return cur
	}

	type session struct {
		id   string
		recs []bailianRec
	}
	var order []*session
	index := map[int64]*session{}
	for _, r := range recs {
		root := findRoot(r.chatID)
		s := index[root]
		if s == nil {
			s = &session{id: strconv.FormatInt(root, 10)}
			index[root] = s
			order = append(order, s)
		}
		s.recs = append(s.recs, r)
	}
	rows := make([]*Row, 0, len(recs))
	for _, s := range order {
		slices.SortStableFunc(s.recs, func(a, b bailianRec) int { return cmp.Compare(a.turn, b.turn) })
		for t, r := range s.recs {
			r.row.SessionID = s.id
			r.row.Turn = t
			rows = append(rows, r.row)
		}
	}
	return rows
}

// parseBailian validates one Bailian record (aiperf's BailianTrace model).
func parseBailian(rec []byte) (bailianRec, error) {
	out := bailianRec{row: new(Row), parent: -1, turn: 1}
	if err := checkObject(rec); err != nil {
		return out, err
	}
	var chatID, timestamp, inputLength, outputLength []byte
	var fe *fieldError
	err := members(rec, func(k string, v []byte, _ int) error {
		switch k {
		case "chat_id":
			chatID = v
		case "parent_chat_id":
			out.parent, fe = integer(k, v)
		case "turn":
			out.turn, fe = integer(k, v)
		case "timestamp":
			timestamp = v
		case "input_length":
			inputLength = v
		case "output_length":
			outputLength = v
		case "type":
			_, fe = stringValue(k, v)
		case "hash_ids":
			out.row.HashIDs, fe = hashIDs(k, v)
		}
		if fe != nil {
			return fe
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	for _, req := range []struct {
		name string
		v    []byte
	}{{"chat_id", chatID}, {"timestamp", timestamp}, {"input_length", inputLength}, {"output_length", outputLength}} {
		if req.v == nil {
			return out, ferr(req.name, "required")
		}
	}
	if out.chatID, fe = integer("chat_id", chatID); fe != nil {
		return out, fe
	}
	row := out.row
	if row.TimestampNS, fe = durationNS("timestamp", timestamp, scaleS); fe != nil {
		return out, fe
	}
	row.HasTimestamp = true
	if row.InputLength, fe = tokens("input_length", inputLength); fe != nil {
		return out, fe
	}
	if row.OutputLength, fe = tokens("output_length", outputLength); fe != nil {
		return out, fe
	}
	row.HasOutputLength = true
	return out, nil
}

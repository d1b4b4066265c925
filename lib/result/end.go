package result

import (
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// End is the line a run writes last in its results file, once every
// request's line is in, whether the run finished or was interrupted:
//
//	{"v":1,"end":true,"run_id":"9f…","results":1000,"interrupted":false}
//
// It is not a request: Decoder skips it (Decoder.End returns it). A replay
// commits its results file whole, end line included (a run killed with
// SIGKILL leaves only its temporary file), so a run without an end line
// was written before runs wrote one (2026-12-04), or its file was cut
// short since (a partial copy). `report` says so, and that an interrupted
// run's figures cover the part it ran: a merge of shards would otherwise
// count a stopped shard's requests over the whole span without a word.
type End struct {
	RunID       string // "run_id": the run's id (RunInfo.ID); "" when it had none
	Results     int64  // "results": the lines the run wrote before this one
	Interrupted bool   // "interrupted": a signal stopped the run before its schedule ended
}

// AppendEnd appends e's line, newline included.
func AppendEnd(dst []byte, e *End) []byte {
	dst = append(dst, `{"v":1,"end":true`...)
	if e.RunID != "" {
		dst = append(dst, `,"run_id":`...)
		dst = jsonx.AppendString(dst, e.RunID)
	}
	dst = append(dst, `,"results":`...)
	dst = strconv.AppendInt(dst, e.Results, 10)
	dst = append(dst, `,"interrupted":`...)
	dst = strconv.AppendBool(dst, e.Interrupted)
	return append(dst, "}\n"...)
}

// isEndKey reports whether k is a member of an end line besides "v" and
// "end".
func isEndKey(k string) bool { return k == "run_id" || k == "results" || k == "interrupted" }

// endField decodes one member of an end line (isEndKey) into e.
func endField(e *End, k string, v []byte) error {
	var err error
	switch k {
	case "run_id":
		e.RunID, err = parseString(k, v)
	case "results":
		e.Results, err = parseInt(k, v, 0, 1<<62)
	case "interrupted":
		e.Interrupted, err = flagField(k, v, false)
	}
	return err
}

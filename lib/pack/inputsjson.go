package pack

import (
	"bufio"
	"io"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/store"
)

// WriteInputsJSON writes the Python aiperf's inputs.json for the bodies of r:
// {"data":[{"session_id":"...","payloads":[body,...]},...]}, sessions in store
// order and turns in turn order, so aiperf can replay the very same bytes
// (its inputs_json dataset type).
func WriteInputsJSON(w io.Writer, r *store.Reader) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(`{"data":[`)
	var buf []byte
	for s := 0; s < r.NumSessions(); s++ {
		if s > 0 {
			bw.WriteByte(',')
		}
		buf = append(buf[:0], "\n"+`{"session_id":`...)
		buf = jsonx.AppendString(buf, r.SessionID(uint32(s)))
		buf = append(buf, `,"payloads":[`...)
		bw.Write(buf)
		for t := 0; t < r.SessionLen(uint32(s)); t++ {
			i, ok := r.Lookup(uint32(s), uint32(t))
			if !ok {
				continue
			}
			if t > 0 {
				bw.WriteByte(',')
			}
			bw.Write(r.Payload(i))
		}
		bw.WriteString("]}")
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

package pack

import (
	"bufio"
	"context"
	"io"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/store"
)

// WriteInputsJSON writes the Python aiperf's inputs.json for the bodies of r:
// {"data":[{"session_id":"...","payloads":[body,...]},...]}, sessions in store
// order and turns in turn order, so aiperf can replay the very same bytes
// (its inputs_json dataset type). Bodies are written straight from the
// store's mapping. ctx interrupts it between bodies.
func WriteInputsJSON(ctx context.Context, w io.Writer, r *store.Reader) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(`{"data":[`)
	var buf []byte
	for s := 0; s < r.NumSessions(); s++ {
		if err := ctx.Err(); err != nil {
			return err
		}
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
			if _, err := r.WritePayload(bw, i); err != nil {
				return err
			}
		}
		bw.WriteString("]}")
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// writeInputsJSON writes the inputs.json of the store at storePath to a
// temporary file for dst, which the caller commits or aborts.
func writeInputsJSON(ctx context.Context, dst, storePath string) (*atomicfile.File, error) {
	r, err := store.Open(storePath, store.OpenOptions{})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := atomicfile.Create(dst)
	if err != nil {
		return nil, err
	}
	if err := WriteInputsJSON(ctx, f, r); err != nil {
		f.Abort()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, f.Named(err)
	}
	return f, nil
}

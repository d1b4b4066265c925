// Package pack turns records JSONL streams into a store file: it merges shards
// by their line key, formats each turn's request body exactly once and streams
// it into a store.Writer.
package pack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/store"
)

// Input is one records stream (a shard).
type Input struct {
	Name string
	R    io.Reader
}

// Options control a pack run.
type Options struct {
	Request     request.Options
	NoEndMarker bool // accept streams without the end line
	// Progress, when set, is called every few thousand records.
	Progress func(records int)
}

// Stats summarises a pack run.
type Stats struct {
	Records   int
	Sessions  int
	BodyBytes int64
}

// Meta keys written into every store.
const (
	MetaEndpoint  = "endpoint"
	MetaPath      = "path"
	MetaModel     = "model"
	MetaStreaming = "streaming"
)

type head struct {
	dec  *record.Decoder
	rec  record.Record
	ok   bool
	last uint64
	seen bool
}

// Run reads every input, merges records by line and writes the store at out.
// On any error nothing is left at out.
func Run(ctx context.Context, inputs []Input, out string, o Options) (Stats, error) {
	var st Stats
	f, err := request.NewFormatter(o.Request)
	if err != nil {
		return st, err
	}
	meta := map[string]string{
		MetaEndpoint:  o.Request.Endpoint,
		MetaPath:      request.Path(o.Request.Endpoint),
		MetaModel:     o.Request.Model,
		MetaStreaming: strconv.FormatBool(o.Request.Streaming),
	}
	w, err := store.Create(out, store.WriterOptions{Meta: meta})
	if err != nil {
		return st, err
	}
	defer w.Abort()

	heads := make([]*head, len(inputs))
	for i, in := range inputs {
		d := record.NewDecoder(in.R, in.Name)
		d.RequireEnd = !o.NoEndMarker
		heads[i] = &head{dec: d}
	}
	advance := func(h *head) error {
		err := h.dec.Next(&h.rec)
		if err == io.EOF {
			h.ok = false
			return nil
		}
		if err != nil {
			return err
		}
		if h.seen && h.rec.Line <= h.last {
			return lineErr(h, "line", fmt.Errorf("%d after %d: records must come in increasing line order", h.rec.Line, h.last))
		}
		h.ok, h.seen, h.last = true, true, h.rec.Line
		return nil
	}
	for _, h := range heads {
		if err := advance(h); err != nil {
			return st, err
		}
	}

	var (
		body      []byte
		sessions  = map[string]uint32{}
		numbered  = -1 // 1: records carry "session"; 0: they do not
		nSessions uint32
	)
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return st, ctx.Err()
		}
		var h *head
		for _, c := range heads {
			if c.ok && (h == nil || c.rec.Line < h.rec.Line) {
				h = c
			}
		}
		if h == nil {
			break
		}
		for _, c := range heads {
			if c != h && c.ok && c.rec.Line == h.rec.Line {
				return st, lineErr(c, "line", fmt.Errorf("%d also appears in %s: shards overlap", c.rec.Line, h.dec.Name()))
			}
		}
		rec := &h.rec

		has := 0
		if rec.Session >= 0 {
			has = 1
		}
		if numbered == -1 {
			numbered = has
		} else if numbered != has {
			return st, lineErr(h, "session", errors.New("given on some records and not on others"))
		}
		var sess uint32
		if numbered == 1 {
			switch {
			case rec.Session < int64(nSessions):
				sess = uint32(rec.Session)
			case rec.Session == int64(nSessions):
				id := rec.SessionID
				if id == "" {
					id = strconv.FormatInt(rec.Session, 10)
				}
				sess = w.AddSession(id)
				nSessions++
			default:
				return st, lineErr(h, "session", fmt.Errorf("%d skips ahead of the %d sessions seen so far (sessions are numbered densely in order of first appearance)", rec.Session, nSessions))
			}
		} else {
			id := rec.SessionID
			if id == "" {
				id = "line-" + strconv.FormatUint(rec.Line, 10)
			}
			s, ok := sessions[id]
			if !ok {
				s = w.AddSession(id)
				sessions[id] = s
				nSessions++
			}
			sess = s
		}

		body, err = f.Append(body[:0], rec)
		if err != nil {
			field := rec.Kind.String()
			if errors.Is(err, request.ErrNoModel) {
				field = ""
			}
			return st, lineErr(h, field, err)
		}
		e := store.Entry{Line: rec.Line, Session: sess, Turn: rec.Turn, InputTokens: rec.InputTokens}
		switch {
		case rec.HasTimestamp:
			e.Flags |= store.FlagTimestamp
			e.TimeNS = rec.TimestampNS
		case rec.HasDelay:
			e.Flags |= store.FlagDelay
			e.TimeNS = rec.DelayNS
		}
		if rec.HasMaxTokens {
			e.Flags |= store.FlagMaxTokens
			e.MaxTokens = rec.MaxTokens
		} else if rec.Kind == record.KindPayload {
			if mt, ok := request.MaxTokensOf(rec.Raw); ok {
				e.Flags |= store.FlagMaxTokens
				e.MaxTokens = mt
			}
		}
		if rec.Kind == record.KindPayload {
			e.Flags |= store.FlagVerbatim
		}
		if err := w.Add(e, body); err != nil {
			return st, lineErr(h, "turn", err)
		}
		st.Records++
		st.BodyBytes += int64(len(body))
		if o.Progress != nil && st.Records&4095 == 0 {
			o.Progress(st.Records)
		}
		if err := advance(h); err != nil {
			return st, err
		}
	}
	st.Sessions = int(nSessions)
	if err := w.Commit(); err != nil {
		return st, err
	}
	return st, nil
}

func lineErr(h *head, field string, err error) error {
	return &record.Error{File: h.dec.Name(), Line: h.dec.LineNo(), Field: field, Err: err}
}

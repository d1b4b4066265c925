// Package pack turns records JSONL streams into a store file: it merges shards
// by their line key, formats each turn's request body exactly once and streams
// it into a store.Writer. It also owns what comes after the store: the
// Python aiperf's inputs.json beside it, and the zstd stream that replaces it
// with Options.Compress.
package pack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/store"
)

// Input is one records stream (a shard).
type Input struct {
	Name string
	R    io.Reader
	// Info describes the file behind R, when there is one (a file, or
	// standard input redirected from a file). Run refuses to write an
	// output that is the same file.
	Info fs.FileInfo
}

// Options control a pack run.
type Options struct {
	Request     request.Options
	NoEndMarker bool // accept streams without the end line
	MaxLine     int  // longest records line accepted; 0 means record.DefaultMaxLine
	// InputsJSON, when set, names a file that receives the Python aiperf's
	// inputs.json for the same bodies (see WriteInputsJSON).
	InputsJSON string
	// Compress writes a zstd stream of the store to the output instead of
	// the store (see Compress).
	Compress bool
	// Progress, when set, is called every few thousand records.
	Progress func(records int)
	// Given says which endpoint options in Request were given explicitly:
	// the others may be taken from verbatim bodies (see Given).
	Given Given
	// Settings, when set, is called once every record is in, with the
	// settings each input's end line carried, and returns the description
	// written into the store under store.MetaSettings (the settings the
	// store was built with; "" writes none). An error stops the run.
	Settings func(inputs []InputSettings) (string, error)
}

// InputSettings is what an input's end line said of the settings that made
// it ("" when it said nothing).
type InputSettings struct {
	Name     string
	Settings string
}

// Stats summarises a pack run.
type Stats struct {
	Records   int
	Sessions  int
	BodyBytes int64
	tree      []store.TreeNode
}

// Run reads every input, merges records by line and writes the store (or
// with o.Compress its zstd stream) at out, and o.InputsJSON when set. All
// outputs appear together or not at all: on any error, an interrupt (ctx)
// included, nothing is left at either name and no temporary file remains.
func Run(ctx context.Context, inputs []Input, out string, o Options) (Stats, error) {
	var st Stats
	if err := checkOutputs(inputs, out, o.InputsJSON); err != nil {
		return st, err
	}
	f, err := request.NewFormatter(o.Request)
	if err != nil {
		return st, err
	}
	// The store is built in a temporary file beside out: renamed into place,
	// or compressed from there.
	tmp, err := atomicfile.Create(out)
	if err != nil {
		return st, err
	}
	defer tmp.Abort()
	w, err := store.NewWriter(tmp.File, out, store.WriterOptions{Meta: meta(o.Request).Map()})
	if err != nil {
		return st, err
	}
	defer w.Abort()
	mc := newMetaCheck(o.Request, o.Given)
	if st, err = build(ctx, w, inputs, f, mc, o); err != nil {
		return st, err
	}
	mm := mc.meta().Map()
	if len(st.tree) > 0 {
		mm[store.MetaTree] = store.EncodeTree(st.tree)
	}
	if err := w.SetMeta(mm); err != nil {
		return st, err
	}
	if err := w.Commit(); err != nil {
		return st, err
	}
	var ij *atomicfile.File
	if o.InputsJSON != "" {
		if ij, err = writeInputsJSON(ctx, o.InputsJSON, tmp.TempName()); err != nil {
			return st, err
		}
		defer ij.Abort()
	}
	if o.Compress {
		if err := compressTo(ctx, out, tmp.File); err != nil {
			return st, err
		}
	} else if err := tmp.Commit(); err != nil {
		return st, err
	}
	if ij != nil {
		if err := ij.Commit(); err != nil {
			return st, err
		}
	}
	return st, nil
}

// build streams every record of the inputs into w.
func build(ctx context.Context, w *store.Writer, inputs []Input, f *request.Formatter, mc *metaCheck, o Options) (Stats, error) {
	var st Stats
	m, err := newMerger(inputs, o, w)
	if err != nil {
		return st, err
	}
	sn := sessionNumbers{w: w, ids: map[string]uint32{}, numbered: -1}
	tr := treeBuilder{ids: map[string]uint32{}}
	extraMessages := false
	for _, e := range o.Request.Extra {
		extraMessages = extraMessages || e.Key == "messages"
	}
	for {
		// Checked on every record: one large record can take a while.
		if err := ctx.Err(); err != nil {
			return st, err
		}
		h, err := m.next()
		if err != nil {
			return st, err
		}
		if h == nil {
			break
		}
		rec := &h.rec
		sess, err := sn.number(rec)
		if err != nil {
			return st, h.err("session", err)
		}
		if err := sn.context(sess, rec); err != nil {
			return st, h.err("context_mode", err)
		}
		if rec.Tree != nil && rec.Turn == 0 {
			if err := tr.add(sess, rec); err != nil {
				return st, h.err("parent_session", err)
			}
		}
		if rec.ContextMode == record.ContextDeltas && (extraMessages || setsMessages(rec.Extra)) {
			return st, h.err("context_mode", errDeltasMessages)
		}
		if rec.Kind == record.KindBlockMessages {
			h.blocks.lengths(rec)
		}
		body, err := f.Format(rec)
		if err != nil {
			field := rec.Kind.String()
			var fe *request.FieldError
			switch {
			case errors.Is(err, request.ErrNoModel):
				field = ""
			case errors.As(err, &fe):
				field, err = fe.Field, fe.Err
			}
			return st, h.err(field, err)
		}
		if err := mc.add(rec, h.pos()); err != nil {
			return st, h.err(rec.Kind.String(), err)
		}
		if rec.BlockSize != 0 {
			if err := w.SetBlockSize(rec.BlockSize); err != nil {
				return st, h.err("block_size", errors.New("differs from an earlier record's: a store has one block size"))
			}
		}
		if body.Runs != nil {
			err = w.AddSpans(entry(rec, sess, body), body.Parts, h.blocks.storeRuns(&body))
		} else {
			err = w.AddHashed(entry(rec, sess, body), rec.HashIDs, body.Parts...)
		}
		if err != nil {
			var we *store.WriteError
			if errors.As(err, &we) {
				return st, err // the output's trouble, not the line's
			}
			return st, h.err("turn", err)
		}
		st.Records++
		st.BodyBytes += int64(body.Len)
		if o.Progress != nil && st.Records&4095 == 0 {
			o.Progress(st.Records)
		}
		if err := m.advance(h); err != nil {
			return st, err
		}
	}
	st.Sessions = int(sn.n)
	st.tree = tr.nodes
	if o.Settings != nil {
		in := make([]InputSettings, len(m.heads))
		for i, h := range m.heads {
			in[i] = InputSettings{Name: h.dec.Name(), Settings: h.dec.Settings()}
		}
		text, err := o.Settings(in)
		if err != nil {
			return st, err
		}
		mc.settings = text
	}
	return st, nil
}

// errDeltasMessages refuses an extra "messages" member on a turn whose
// session accumulates deltas, as the Python aiperf does: merged into the
// body after the turn's own messages, it would replace the history that
// replay splices in front of them.
var errDeltasMessages = fmt.Errorf("%q cannot go with an extra that sets \"messages\": it would replace the turn's messages, in front of which replay puts the session's history", record.ContextDeltas)

// setsMessages reports whether a record's extra object has a "messages"
// member.
func setsMessages(extra []byte) bool {
	found := false
	if extra != nil {
		jsonx.Fields(extra, jsonx.SkipSpace(extra, 0), func(k, _ []byte, _ int) error {
			if key, err := jsonx.Unquote(k); err == nil && key == "messages" {
				found = true
			}
			return nil
		})
	}
	return found
}

// entry is the index row of rec.
func entry(rec *record.Record, sess uint32, body request.Body) store.Entry {
	e := store.Entry{Line: rec.Line, Session: sess, Turn: rec.Turn, InputTokens: rec.InputTokens}
	switch {
	case rec.HasTimestamp:
		e.Flags |= store.FlagTimestamp
		e.TimeNS = rec.TimestampNS
	case rec.HasDelay:
		e.Flags |= store.FlagDelay
		e.TimeNS = rec.DelayNS
	}
	if body.HasMaxTokens {
		e.Flags |= store.FlagMaxTokens
		e.MaxTokens = body.MaxTokens
	}
	if rec.Kind == record.KindPayload {
		e.Flags |= store.FlagVerbatim
	}
	switch rec.ContextMode {
	case record.ContextDeltas:
		e.Flags |= store.FlagContextDeltas
	case record.ContextMessageArray:
		e.Flags |= store.FlagContextMessageArray
	}
	return e
}

// sessionNumbers gives sessions dense numbers in order of first appearance.
// Records either all carry their number ("session", written by tokenize) or
// none do, and then sessions are told apart by session_id (or, without one,
// each record is a session of its own).
type sessionNumbers struct {
	w        *store.Writer
	ids      map[string]uint32
	numbered int // -1 until the first record; then 1 if records carry "session", else 0
	n        uint32
	ctx      []sessionContext // by session number
}

// sessionContext is a session's context mode and the record line that set it.
type sessionContext struct {
	mode string
	line uint64
}

// context checks that rec has the context mode of its session's earlier
// records (the store flags it per turn, and replay reads it per session).
func (sn *sessionNumbers) context(sess uint32, rec *record.Record) error {
	if int(sess) == len(sn.ctx) {
		sn.ctx = append(sn.ctx, sessionContext{mode: rec.ContextMode, line: rec.Line})
		return nil
	}
	c := sn.ctx[sess]
	if c.mode == rec.ContextMode {
		return nil
	}
	say := func(m string) string {
		if m == "" {
			return "none"
		}
		return strconv.Quote(m)
	}
	return fmt.Errorf("%s, but the record with line %d of the same session says %s: every record of a session has the same context mode",
		say(rec.ContextMode), c.line, say(c.mode))
}

func (sn *sessionNumbers) number(rec *record.Record) (uint32, error) {
	has := 0
	if rec.Session >= 0 {
		has = 1
	}
	if sn.numbered == -1 {
		sn.numbered = has
	} else if sn.numbered != has {
		return 0, errors.New("given on some records and not on others")
	}
	if sn.numbered == 1 {
		switch {
		case rec.Session < int64(sn.n):
			return uint32(rec.Session), nil
		case rec.Session == int64(sn.n):
			id := rec.SessionID
			if id == "" {
				id = strconv.FormatInt(rec.Session, 10)
			}
			sn.n++
			return sn.w.AddSession(id), nil
		default:
			return 0, fmt.Errorf("%d skips ahead of the %d sessions seen so far (sessions are numbered densely in order of first appearance; the records of aiperf-tokenize --shard i/N begin at session i: pack every shard's records)", rec.Session, sn.n)
		}
	}
	id := rec.SessionID
	if id == "" {
		id = "line-" + strconv.FormatUint(rec.Line, 10)
	}
	s, ok := sn.ids[id]
	if !ok {
		s = sn.w.AddSession(id)
		sn.ids[id] = s
		sn.n++
	}
	return s, nil
}

// head is the current record of one input.
type head struct {
	dec  *record.Decoder
	rec  record.Record
	ok   bool // rec holds a record
	last uint64
	seen bool
	// blocks are the input's block lines so far (the block form)
	blocks table
}

// pos is "file:line" of the current record.
func (h *head) pos() string { return h.dec.Name() + ":" + strconv.FormatInt(h.dec.LineNo(), 10) }

func (h *head) err(field string, err error) error {
	return &record.Error{File: h.dec.Name(), Line: h.dec.LineNo(), Field: field, Err: err}
}

// merger yields the records of several shards in line order.
type merger struct {
	heads []*head
	w     *store.Writer // block lines go straight to it
}

func newMerger(inputs []Input, o Options, w *store.Writer) (*merger, error) {
	m := &merger{heads: make([]*head, len(inputs)), w: w}
	for i, in := range inputs {
		d := record.NewDecoder(in.R, in.Name)
		d.RequireEnd = !o.NoEndMarker
		d.MaxLine = o.MaxLine
		m.heads[i] = &head{dec: d}
	}
	for _, h := range m.heads {
		if err := m.advance(h); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// advance reads h's next record and checks that lines increase.
func (m *merger) advance(h *head) error {
	err := h.dec.Next(&h.rec)
	for err == nil && h.rec.Kind == record.KindBlock {
		if err = h.blocks.define(m.w, h.rec.Block, h.rec.Raw); err != nil {
			return err
		}
		err = h.dec.Next(&h.rec)
	}
	if err == io.EOF {
		h.ok = false
		return nil
	}
	if err != nil {
		return err
	}
	if h.seen && h.rec.Line <= h.last {
		return h.err("line", fmt.Errorf("%d after %d: records must come in increasing line order", h.rec.Line, h.last))
	}
	h.ok, h.seen, h.last = true, true, h.rec.Line
	return nil
}

// next returns the head with the lowest line, or nil when every input is
// done. Two shards with the same line overlap: an error.
func (m *merger) next() (*head, error) {
	var h *head
	for _, c := range m.heads {
		if c.ok && (h == nil || c.rec.Line < h.rec.Line) {
			h = c
		}
	}
	if h == nil {
		return nil, nil
	}
	for _, c := range m.heads {
		if c != h && c.ok && c.rec.Line == h.rec.Line {
			return nil, c.err("line", fmt.Errorf("%d also appears in %s: shards overlap", c.rec.Line, h.dec.Name()))
		}
	}
	return h, nil
}

// checkOutputs refuses outputs that would destroy an input, or each other.
// Files are compared by device and inode (os.SameFile), so "./x" and "x", a
// hard link, a symbolic link and standard input redirected from the file
// are all caught.
func checkOutputs(inputs []Input, out, inputsJSON string) error {
	outs := []string{out}
	if inputsJSON != "" {
		outs = append(outs, inputsJSON)
		if same(out, inputsJSON) {
			return fmt.Errorf("the store and the inputs.json output are the same file (%s and %s)", out, inputsJSON)
		}
	}
	for _, o := range outs {
		fi, err := os.Stat(o)
		if err != nil {
			continue // absent: it cannot be an input
		}
		for _, in := range inputs {
			if in.Info != nil && os.SameFile(fi, in.Info) {
				return fmt.Errorf("refusing to write %s: it is the input %s", o, in.Name)
			}
		}
	}
	return nil
}

// same reports whether two output names denote one file: the same existing
// file, or the same path when absent.
func same(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	pa, errA := filepath.Abs(a)
	pb, errB := filepath.Abs(b)
	return errA == nil && errB == nil && pa == pb
}

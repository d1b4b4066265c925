package ingest

import (
	"fmt"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/trace"
)

// tree is the record's session tree, its model renamed by the options.
func (r *runner) tree(a *trace.Agentic) *record.Tree {
	t := &record.Tree{Model: a.Model, ParentSession: a.Parent, SpawnTurn: int64(a.SpawnTurn), JoinTurn: int64(a.JoinTurn),
		Agent: a.Agent, HasAPITime: a.HasAPITime, APITimeNS: a.APITimeNS, HasThinkTime: a.HasThinkTime, ThinkTimeNS: a.ThinkTimeNS}
	if m, ok := r.o.ModelMap[a.Model]; ok {
		t.Model = m
	}
	return t
}

// agentic sets the messages of an agentic row: a message per segment, its
// content the text of the segment's blocks, each block exactly block_size
// tokens but the prompt's last (the remainder). Every content re-encodes
// alone to its blocks' tokens, so the contents sum to input_length.
func (r *runner) agentic(row *trace.Row, rec *record.Record) error {
	if err := r.checkBlockSize(row); err != nil {
		return err
	}
	if err := r.loadSynth(); err != nil {
		return err
	}
	if !r.o.NoBlocks {
		return r.agenticBlocks(row, rec, true)
	}
	B := row.Agentic.BlockSize
	ids := row.HashIDs
	last := row.InputLength - (len(ids)-1)*B
	b := append(r.lit[:0], '[')
	for i, sg := range row.Agentic.Segments {
		part := ids[:sg.Blocks]
		ids = ids[sg.Blocks:]
		n := len(part) * B
		if len(ids) == 0 {
			n += last - B
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = jsonx.AppendString(b, sg.Role)
		b = append(b, `,"content":`...)
		start := len(b)
		var err error
		if b, err = r.syn.AppendPrompt(b, row.Line, n, part); err != nil {
			return rowErr(row, err)
		}
		if r.ver != nil {
			r.ver.submit(row.Source, row.Line, b[start:], n)
		}
		b = append(b, '}')
	}
	r.lit = append(b, ']')
	rec.Kind, rec.Raw = record.KindMessages, r.lit
	rec.ContextMode = record.ContextMessageArray
	rec.HashIDs, rec.BlockSize = row.HashIDs, uint32(B)
	r.st.PromptTokens += int64(row.InputLength)
	return nil
}

// checkAgentic registers the blocks of a row another shard emits.
func (r *runner) checkAgentic(row *trace.Row) error {
	if err := r.checkBlockSize(row); err != nil {
		return err
	}
	if err := r.loadSynth(); err != nil {
		return err
	}
	if !r.o.NoBlocks {
		return r.agenticBlocks(row, nil, false)
	}
	if err := r.syn.Check(row.Line, row.InputLength, row.HashIDs); err != nil {
		return rowErr(row, err)
	}
	return nil
}

func (r *runner) checkBlockSize(row *trace.Row) error {
	if r.autoBlock {
		r.o.Synth.BlockSize, r.autoBlock = row.Agentic.BlockSize, false
	}
	if bs := row.Agentic.BlockSize; bs != r.o.Synth.BlockSize {
		return &trace.Error{File: row.Source, Field: "block_size", Err: fmt.Errorf("%d tokens, but the prompts are made of %d-token blocks: give --block-size %d (every file of one input must have the same)", bs, r.o.Synth.BlockSize, bs)}
	}
	return nil
}

package pack

import (
	"fmt"
	"sort"

	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/store"
)

// table is one input's blocks (its block lines), in increasing record
// block number: the number the store gave each and its text's length.
// Memory is 12 bytes a block; the texts go straight to the store's block
// region (store.Writer.AddBlock).
type table struct {
	ids   []uint32
	store []uint32
	lens  []uint32
	runs  []store.Run
}

// define stores block id's text for input t.
func (t *table) define(w *store.Writer, id uint32, text []byte) error {
	n, err := w.AddBlock(text)
	if err != nil {
		return err
	}
	t.ids = append(t.ids, id)
	t.store = append(t.store, n)
	t.lens = append(t.lens, uint32(len(text)))
	return nil
}

// index returns the place in t of block id (the decoder checked that every
// block a record refers to was defined).
func (t *table) index(id uint32) int {
	return sort.Search(len(t.ids), func(i int) bool { return t.ids[i] >= id })
}

// lengths fills in the text length of each run of blocks of rec.
func (t *table) lengths(rec *record.Record) {
	for i := range rec.Pieces {
		p := &rec.Pieces[i]
		if p.N == 0 {
			continue
		}
		j := t.index(p.First)
		p.Len = 0
		for _, l := range t.lens[j : j+int(p.N)] {
			p.Len += int(l)
		}
	}
}

// storeRuns turns a body's runs of record blocks into runs of the store's
// blocks (one input's blocks are consecutive in the store unless other
// inputs' block lines came between them: then a run splits).
func (t *table) storeRuns(body *request.Body) []store.Run {
	out := t.runs[:0]
	for _, r := range body.Runs {
		j := t.index(r.First)
		for k := j; k < j+int(r.N); {
			e := k + 1
			for e < j+int(r.N) && t.store[e] == t.store[e-1]+1 {
				e++
			}
			out = append(out, store.Run{Part: r.Part, First: t.store[k], N: uint32(e - k)})
			k = e
		}
	}
	t.runs = out
	return out
}

// treeBuilder collects the session tree of agentic records (record.Tree)
// for the store's MetaTree: parents by session id, as records name them.
type treeBuilder struct {
	ids   map[string]uint32
	nodes []store.TreeNode
}

// add places the session of rec (its turn 0) in the tree.
func (t *treeBuilder) add(sess uint32, rec *record.Record) error {
	t.ids[rec.SessionID] = sess
	p := rec.Tree.ParentSession
	if p == "" {
		return nil
	}
	ps, ok := t.ids[p]
	if !ok {
		return fmt.Errorf("%q is not a session before %q", p, rec.SessionID)
	}
	t.nodes = append(t.nodes, store.TreeNode{Session: sess, Parent: ps, SpawnTurn: rec.Tree.SpawnTurn, JoinTurn: rec.Tree.JoinTurn, Agent: rec.Tree.Agent})
	return nil
}

package trace

import (
	"fmt"
	"hash/fnv"
	"sort"
)

// wekaSession is one session of a trace's tree, its requests in time order.
type wekaSession struct {
	id                  string
	parent              *wekaSession
	spawnTurn, joinTurn int
	agent               string
	prefix              int // blocks of the turn-0 system message
	reqs                []*wekaReq
}

// rows builds the trace's sessions (the root, a child per subagent, a
// child per detected parallel chain) and their rows, numbered from *seq.
func (tr *wekaTrace) rows(seq *int64, filt *filter) ([]*Row, error) {
	sessions, err := tr.sessions()
	if err != nil {
		return nil, err
	}
	k := fnvKey(tr.id)
	tailKey := fnvKey(tr.id + "\x00tail")
	var rows []*Row
	var ord uint64
	for _, s := range sessions {
		var lay layout
		for turn, r := range s.reqs {
			segs, err := lay.next(tr, s, turn, r)
			if err != nil {
				return nil, err
			}
			row := &Row{Source: tr.file, Seq: *seq, Line: *seq + 1, SessionID: s.id, Turn: turn,
				HasTimestamp: true, TimestampNS: r.t, InputLength: r.in,
				HasOutputLength: true, OutputLength: max(r.out, 1)}
			*seq++
			ids := make([]uint64, 0, len(r.ids)+1)
			for _, id := range r.ids {
				ids = append(ids, mix64(id^k))
			}
			if r.in%tr.bs != 0 {
				ids = append(ids, mix64(ord^tailKey)) // the request's own last block
			}
			ord++
			row.HashIDs = ids
			a := &Agentic{Model: r.model, SpawnTurn: -1, JoinTurn: -1, Agent: s.agent, Stream: r.stream, BlockSize: tr.bs,
				HasAPITime: r.hasA, APITimeNS: r.api, HasThinkTime: r.hasT, ThinkTimeNS: r.thk, Segments: segs}
			if s.parent != nil {
				a.Parent, a.SpawnTurn, a.JoinTurn = s.parent.id, s.spawnTurn, s.joinTurn
			}
			row.Agentic = a
			if s.parent == nil && filt != nil {
				// --max-osl caps the root's requests only: the Python
				// aiperf sends subagents' recorded output lengths.
				filt.keep(&Row{HasOutputLength: true, OutputLength: row.OutputLength})
				if o := filt.opt.MaxOutputLength; o > 0 && row.OutputLength > o {
					row.OutputLength = o
				}
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// sessions splits the trace into its session tree, parents before
// children.
func (tr *wekaTrace) sessions() ([]*wekaSession, error) {
	root := &wekaSession{id: tr.id, spawnTurn: -1, joinTurn: -1}
	rootP := prefixBlocks(tr.tool, tr.system, tr.bs)
	out := []*wekaSession{root}
	out = append(out, splitChains(root, sortByTime(tr.reqs), rootP, tr.bs)...)
	seen := map[string]string{}
	for _, sub := range tr.subs {
		if prev, dup := seen[sub.agentID]; dup {
			return nil, &Error{File: tr.file, Field: sub.path + ".agent_id", Err: fmt.Errorf("agent %q is also the agent of %s", sub.agentID, prev)}
		}
		seen[sub.agentID] = sub.path
		s := &wekaSession{id: tr.id + "/" + sub.agentID, parent: root, spawnTurn: -1, joinTurn: -1, agent: sub.typ}
		for i, r := range root.reqs {
			if r.outer < sub.outer {
				s.spawnTurn = i
			} else if s.joinTurn < 0 && sub.status != "async_launched" {
				s.joinTurn = i
			}
		}
		out = append(out, s)
		out = append(out, splitChains(s, sortByTime(sub.reqs), prefixBlocks(sub.tool, sub.system, tr.bs), tr.bs)...)
	}
	for _, s := range out {
		if len(s.reqs) > 0 && s.prefix > len(s.reqs[0].ids) {
			r := s.reqs[0]
			return nil, &Error{File: tr.file, Field: r.path + ".hash_ids", Err: fmt.Errorf("the first request of session %q has %d blocks, fewer than the %d its tool_tokens and system_tokens take", s.id, len(r.ids), s.prefix)}
		}
	}
	return out, nil
}

func prefixBlocks(tool, system, bs int) int { return (tool + system + bs - 1) / bs }

func sortByTime(reqs []*wekaReq) []*wekaReq {
	out := append([]*wekaReq(nil), reqs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].t < out[j].t })
	return out
}

// splitChains detects the parallel chains of a flat request list (see
// chainOf), gives the main chain's requests to owner and returns a child
// session per other chain.
func splitChains(owner *wekaSession, reqs []*wekaReq, prefix, bs int) []*wekaSession {
	owner.prefix = prefix
	chain := chainOf(reqs)
	var kids []*wekaSession
	for i, r := range reqs {
		c := chain[i]
		if c == 0 {
			owner.reqs = append(owner.reqs, r)
			continue
		}
		for len(kids) < c {
			kids = append(kids, &wekaSession{id: fmt.Sprintf("%s/chain_%03d", owner.id, len(kids)+1), parent: owner, agent: "chain", spawnTurn: -1, joinTurn: -1})
		}
		kids[c-1].reqs = append(kids[c-1].reqs, r)
	}
	var first []uint64
	if len(owner.reqs) > 0 {
		first = owner.reqs[0].ids
	}
	for _, k := range kids {
		start, end := k.reqs[0].t, int64(0)
		for _, r := range k.reqs {
			end = max(end, r.end)
		}
		for i, r := range owner.reqs {
			if r.t <= start {
				k.spawnTurn = i
			} else if k.joinTurn < 0 && r.t >= end {
				k.joinTurn = i
			}
		}
		// The owner's system message only when the chain provably starts
		// with its blocks (the Python aiperf's rule): else all user.
		if ids := k.reqs[0].ids; prefix > 0 && len(ids) >= prefix && len(first) >= prefix && CommonPrefix(ids, first) >= prefix {
			k.prefix = prefix
		}
	}
	return kids
}

// chainOf assigns each request of a time-ordered flat list to a chain (0:
// the main chain, of the first request), from hash-id prefix evidence:
//   - a request continues the free chain (its last request ended by this
//     one's start, on the same model) whose last hash ids it extends, the
//     longest such;
//   - else, a request that keeps a part of a free chain's last hash ids
//     (a compaction) continues the one it shares most with, if no later
//     request shares more with that state (it is never touched again);
//   - else it starts a new chain (a parallel worker, a one-shot call).
//
// A request without hash ids rides the main chain.
func chainOf(reqs []*wekaReq) []int {
	out := make([]int, len(reqs))
	var tails []*wekaReq
	for i, r := range reqs {
		if i == 0 || len(tails) == 0 {
			tails = append(tails, r)
			continue
		}
		if len(r.ids) == 0 {
			continue
		}
		best, bestLen := -1, -1
		for c, t := range tails {
			if t.model != r.model || t.end > r.t+wekaEpsilonNS || len(t.ids) == 0 || len(t.ids) > len(r.ids) {
				continue
			}
			if CommonPrefix(t.ids, r.ids) == len(t.ids) && len(t.ids) > bestLen {
				best, bestLen = c, len(t.ids)
			}
		}
		if best < 0 {
			best = seam(reqs, i, tails)
		}
		if best < 0 {
			best = len(tails)
			tails = append(tails, r)
		}
		tails[best] = r
		out[i] = best
	}
	return out
}

// seam returns the free chain request i continues by a compaction, or -1.
func seam(reqs []*wekaReq, i int, tails []*wekaReq) int {
	r := reqs[i]
	best, bestLen := -1, 0
	for c, t := range tails {
		if t.model != r.model || t.end > r.t+wekaEpsilonNS {
			continue
		}
		if n := CommonPrefix(t.ids, r.ids); n > bestLen {
			best, bestLen = c, n
		}
	}
	if best < 0 {
		return -1
	}
	for _, later := range reqs[i+1:] {
		if CommonPrefix(later.ids, tails[best].ids) > bestLen {
			return -1
		}
	}
	return best
}

// CommonPrefix is the length of the longest common prefix of two hash-id
// lists: how much of a conversation two requests share.
func CommonPrefix(a, b []uint64) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// layout lays out the prompts of one session's turns as messages, the
// Python aiperf's way: turn 0 is a system message of the tool and system
// blocks and a user message of the rest; each later turn keeps the earlier
// messages up to the longest common prefix of its hash ids with the turn
// before, then an assistant message of the blocks the previous output
// took (ceil(out/block_size), at most the new blocks) and a user message
// of the remaining new blocks and the request's own last block.
type layout struct {
	segs []Segment
	prev *wekaReq
}

func (l *layout) next(tr *wekaTrace, s *wekaSession, turn int, r *wekaReq) ([]Segment, error) {
	n := len(r.ids)
	tail := 0
	if r.in%tr.bs != 0 {
		tail = 1
	}
	if l.prev == nil {
		l.segs = l.segs[:0]
		if s.prefix > 0 {
			l.segs = append(l.segs, Segment{Role: "system", Blocks: s.prefix})
		}
		l.segs = append(l.segs, Segment{Role: "user", Blocks: n - s.prefix})
	} else {
		keep := CommonPrefix(l.prev.ids, r.ids)
		l.truncate(keep)
		fresh := n - keep
		asst := min((l.prev.out+tr.bs-1)/tr.bs, fresh)
		if asst > 0 {
			l.segs = append(l.segs, Segment{Role: "assistant", Blocks: asst})
		}
		l.segs = append(l.segs, Segment{Role: "user", Blocks: fresh - asst})
	}
	l.prev = r
	out := make([]Segment, 0, len(l.segs))
	for i, sg := range l.segs {
		if i == len(l.segs)-1 {
			sg.Blocks += tail
		}
		if sg.Blocks > 0 {
			out = append(out, sg)
		}
	}
	// the state keeps full blocks only: the last block is the request's own
	_ = turn
	return out, nil
}

// truncate keeps the first n blocks of the messages.
func (l *layout) truncate(n int) {
	sum := 0
	for i, sg := range l.segs {
		if sum+sg.Blocks >= n {
			l.segs[i].Blocks = n - sum
			l.segs = l.segs[:i+1]
			return
		}
		sum += sg.Blocks
	}
}

func fnvKey(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// mix64 is splitmix64's finalizer, a bijection of uint64: a trace's hash
// ids stay distinct, and ids of different traces are apart.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Package weka writes Weka-shaped agentic traces (the kv-cache-tester
// format that aiperf-tokenize --type weka_trace reads), one JSON object a
// file, for tests and benchmarks: a root conversation of mixed n and s
// requests whose hash_ids grow turn by turn, subagents (completed ones the
// parent joins, async_launched ones it does not; inner t relative or
// absolute), parallel chains inside the flat request list, and, when asked,
// one prompt of Options.BigTokens tokens.
package weka

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// Options shape the traces.
type Options struct {
	Traces    int    // files trace_0001.json ... (at least 1)
	Turns     int    // root requests a trace (at least 4)
	BlockSize int    // tokens per block (64 when 0)
	BigTokens int    // when > 0, the first trace's last prompt has at least this many tokens
	Seed      uint64 // random seed
}

type request struct {
	T           float64    `json:"t"`
	Type        string     `json:"type"`
	Model       string     `json:"model,omitempty"`
	In          int        `json:"in,omitempty"`
	Out         *int       `json:"out,omitempty"`
	HashIDs     []uint64   `json:"hash_ids,omitempty"`
	InputTypes  []string   `json:"input_types,omitempty"`
	OutputTypes []string   `json:"output_types,omitempty"`
	Stop        *string    `json:"stop,omitempty"`
	APITime     *float64   `json:"api_time,omitempty"`
	ThinkTime   *float64   `json:"think_time,omitempty"`
	TTFT        *float64   `json:"ttft,omitempty"`
	AgentID     string     `json:"agent_id,omitempty"`
	SubType     string     `json:"subagent_type,omitempty"`
	DurationMS  *int64     `json:"duration_ms,omitempty"`
	Status      string     `json:"status,omitempty"`
	Models      []string   `json:"models,omitempty"`
	ToolTokens  *int       `json:"tool_tokens,omitempty"`
	SysTokens   *int       `json:"system_tokens,omitempty"`
	Requests    []*request `json:"requests,omitempty"`
}

type trace struct {
	ID         string     `json:"id"`
	Models     []string   `json:"models"`
	BlockSize  int        `json:"block_size"`
	Scope      string     `json:"hash_id_scope"`
	ToolTokens int        `json:"tool_tokens"`
	SysTokens  int        `json:"system_tokens"`
	Requests   []*request `json:"requests"`
}

const (
	big   = "claude-opus"
	small = "claude-haiku"
)

// Write writes o.Traces files into dir (created when missing) and returns
// their number of n/s requests, subagents' included.
func Write(dir string, o Options) (int, error) {
	if o.BlockSize == 0 {
		o.BlockSize = 64
	}
	o.Traces, o.Turns = max(o.Traces, 1), max(o.Turns, 4)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	total := 0
	for i := 1; i <= o.Traces; i++ {
		g := &gen{o: o, rng: rand.New(rand.NewPCG(o.Seed, uint64(i))), next: 1}
		tr := g.trace(fmt.Sprintf("trace_%04d", i), i == 1)
		b, err := json.Marshal(tr)
		if err != nil {
			return total, err
		}
		if err := os.WriteFile(filepath.Join(dir, tr.ID+".json"), append(b, '\n'), 0o644); err != nil {
			return total, err
		}
		total += g.count
	}
	return total, nil
}

type gen struct {
	o     Options
	rng   *rand.Rand
	next  uint64 // next fresh hash id
	count int
}

func (g *gen) fresh(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = g.next
		g.next++
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// req makes an n or s request of the given full blocks plus a partial tail.
func (g *gen) req(t float64, model string, ids []uint64, out int, stream bool) *request {
	bs := g.o.BlockSize
	r := &request{T: round3(t), Type: "n", Model: model, In: len(ids)*bs + g.rng.IntN(bs), Out: ptr(out),
		HashIDs: append([]uint64(nil), ids...), InputTypes: []string{"text"}, OutputTypes: []string{"text"},
		Stop: ptr("end_turn"), APITime: ptr(round3(0.5 + g.rng.Float64()*2)), ThinkTime: ptr(round3(g.rng.Float64()))}
	if r.In == 0 {
		r.In = 1
	}
	if g.rng.IntN(3) == 0 {
		r.Stop, r.OutputTypes = ptr("tool_use"), []string{"tool_use"}
	}
	if stream {
		r.Type, r.TTFT = "s", ptr(round3(*r.APITime/4))
	}
	g.count++
	return r
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// trace builds one trace: the root conversation with a parallel chain, a
// completed subagent, an async one and, for the first, the big prompt.
func (g *gen) trace(id string, first bool) *trace {
	bs := g.o.BlockSize
	tr := &trace{ID: id, Models: []string{big, small}, BlockSize: bs, Scope: "local",
		ToolTokens: 2*bs + g.rng.IntN(4*bs), SysTokens: bs + g.rng.IntN(2*bs)}
	prefix := g.fresh((tr.ToolTokens + tr.SysTokens + bs - 1) / bs)
	ids := append(append([]uint64(nil), prefix...), g.fresh(1+g.rng.IntN(4))...)
	t := 0.0
	for turn := 0; turn < g.o.Turns; turn++ {
		out := 20 + g.rng.IntN(3*bs)
		if first && g.o.BigTokens > 0 && turn == g.o.Turns-1 {
			if need := g.o.BigTokens/bs + 1 - len(ids); need > 0 {
				ids = append(ids, g.fresh(need)...)
			}
		}
		r := g.req(t, big, ids, out, turn%2 == 1)
		tr.Requests = append(tr.Requests, r)
		end := t + *r.APITime
		switch turn {
		case 1:
			// two parallel workers on the system prefix, while the main
			// chain waits for them
			w1 := append(append([]uint64(nil), prefix...), g.fresh(2)...)
			w2 := append(append([]uint64(nil), prefix...), g.fresh(3)...)
			a := g.req(end+0.1, big, w1, 30, false)
			b := g.req(end+0.15, big, w2, 30, true)
			c := g.req(a.T+*a.APITime+0.1, big, append(w1, g.fresh(2)...), 30, false)
			tr.Requests = append(tr.Requests, a, b, c)
			end = max(c.T+*c.APITime, b.T+*b.APITime)
		case 2:
			s := g.sub(id, "agent_001", "Explore", "completed", end+0.2, false)
			tr.Requests = append(tr.Requests, s)
			end = s.T + float64(*s.DurationMS)/1000
		case 3:
			s := g.sub(id, "agent_002", "general-purpose", "async_launched", end+0.2, true)
			tr.Requests = append(tr.Requests, s)
		}
		// the next turn keeps the conversation, adds the answer's blocks
		// and a new user message
		ids = append(ids, g.fresh((out+bs-1)/bs+1+g.rng.IntN(3))...)
		t = end + 0.3 + g.rng.Float64()
	}
	return tr
}

// sub is a subagent of a few turns on the small model; rel writes its inner
// t relative to the spawn (older captures), else absolute.
func (g *gen) sub(trace, agent, typ, status string, t float64, rel bool) *request {
	bs := g.o.BlockSize
	tool, sys := bs+g.rng.IntN(2*bs), g.rng.IntN(bs)
	s := &request{T: round3(t), Type: "subagent", AgentID: agent, SubType: typ, Status: status,
		Models: []string{small}, ToolTokens: ptr(tool), SysTokens: ptr(sys)}
	ids := append(g.fresh((tool+sys+bs-1)/bs), g.fresh(2)...)
	at := t + 0.05
	for i := 0; i < 3; i++ {
		r := g.req(at, small, ids, 10+g.rng.IntN(bs), i == 2)
		if rel {
			r.T = round3(at - t)
		}
		s.Requests = append(s.Requests, r)
		at += *r.APITime + 0.1
		ids = append(ids, g.fresh(2)...)
	}
	s.DurationMS = ptr(int64((at - t) * 1000))
	return s
}

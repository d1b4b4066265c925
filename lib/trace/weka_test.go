package trace

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readWeka(t *testing.T, path string) []*Row {
	t.Helper()
	rd, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if rd.Type() != TypeWeka {
		t.Fatalf("detected %s", rd.Type())
	}
	var rows []*Row
	for {
		r, err := rd.Next()
		if err == io.EOF {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
}

func segs(r *Row) string {
	var b []string
	for _, s := range r.Agentic.Segments {
		b = append(b, fmt.Sprintf("%s:%d", s.Role, s.Blocks))
	}
	return strings.Join(b, " ")
}

// TestWekaTree reads a trace with a subagent (inner times relative to its
// spawn), an async subagent and a parallel chain, and checks the session
// tree, the recorded timing and the message layout.
func TestWekaTree(t *testing.T) {
	rows := readWeka(t, "testdata/weka")
	var got []string
	for _, r := range rows {
		a := r.Agentic
		got = append(got, fmt.Sprintf("%s#%d t=%dms in=%d out=%d ids=%d parent=%q spawn=%d join=%d agent=%q model=%s [%s]",
			r.SessionID, r.Turn, r.TimestampNS/1e6, r.InputLength, r.OutputLength, len(r.HashIDs), a.Parent, a.SpawnTurn, a.JoinTurn, a.Agent, a.Model, segs(r)))
	}
	want := []string{
		// turn 0: ceil((3+2)/4) = 2 system blocks, then the own last block
		`trace_0001#0 t=0ms in=10 out=5 ids=3 parent="" spawn=-1 join=-1 agent="" model=big [system:2 user:1]`,
		// extends turn 0: ceil(5/4) = 2 assistant blocks, then the rest
		`trace_0001#1 t=6000ms in=17 out=2 ids=5 parent="" spawn=-1 join=-1 agent="" model=big [system:2 assistant:2 user:1]`,
		// [1,2,3,4,5] extends [1,2,3,4] (turn 1), not the chain's [1,9];
		// in=20 is 5 full blocks, the new one all the previous output's
		`trace_0001#2 t=10000ms in=20 out=1 ids=5 parent="" spawn=-1 join=-1 agent="" model=big [system:2 assistant:2 assistant:1]`,
		// [1,9] shares [1] only with a state touched again: a parallel chain
		`trace_0001/chain_001#0 t=7000ms in=8 out=1 ids=2 parent="trace_0001" spawn=1 join=2 agent="chain" model=big [user:2]`,
		`trace_0001/agent_001#0 t=2000ms in=9 out=3 ids=3 parent="trace_0001" spawn=0 join=1 agent="Explore" model=small [system:1 user:2]`,
		`trace_0001/agent_001#1 t=3000ms in=12 out=3 ids=3 parent="trace_0001" spawn=0 join=1 agent="Explore" model=small [system:1 user:1 assistant:1]`,
		// async_launched: the parent never waits; out 0 is sent as 1; it
		// follows the root's turn 1 (the chain's request is not the root's)
		`trace_0001/agent_002#0 t=8500ms in=4 out=1 ids=1 parent="trace_0001" spawn=1 join=-1 agent="Task" model=small [user:1]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, r := range rows {
		if r.Seq != int64(i) || r.Line != int64(i)+1 {
			t.Errorf("row %d: seq %d line %d", i, r.Seq, r.Line)
		}
	}
	// local scope: hash id 1 of another trace is another block
	if rows[0].HashIDs[0] == mix64(1) {
		t.Error("hash ids are not scoped to their trace")
	}
	if a := rows[1].Agentic; !a.Stream || !a.HasAPITime || a.APITimeNS != 1e9 || !a.HasThinkTime || a.ThinkTimeNS != 5e8 {
		t.Errorf("recorded timing: %+v", a)
	}
}

// TestWekaBad checks that bad input names the file and the JSON path.
func TestWekaBad(t *testing.T) {
	good, err := os.ReadFile("testdata/weka/trace_0001.json")
	if err != nil {
		t.Fatal(err)
	}
	g := string(good)
	for _, c := range []struct{ name, doc, want string }{
		{"truncated", g[:200], "trace_0003.json: not valid JSON"},
		{"hash id", strings.Replace(g, `"hash_ids":[1,2,3,4]`, `"hash_ids":[1,2,"x",4]`, 1), "trace_0003.json: requests[2].hash_ids[2]: not an unsigned 64-bit integer"},
		{"in not covered", strings.Replace(g, `"in":17`, `"in":27`, 1), "trace_0003.json: requests[2].hash_ids: 4 hash_ids of 4-token blocks cannot make in=27: want 6"},
		{"wrong type", strings.Replace(g, `"out":2,`, `"out":"2",`, 1), "trace_0003.json: requests[2].out: must be an integer, got string"},
		{"no requests", strings.Replace(g, `"requests":[
 {"t":8.5,"type":"n","model":"small","in":4,"out":0,"hash_ids":[60]}]`, `"requests":[]`, 1), `trace_0003.json: requests[4].requests: a subagent without requests`},
		{"scope", strings.Replace(g, `"local"`, `"global"`, 1), `trace_0003.json: hash_id_scope: "global" is not supported`},
		{"unknown field", strings.Replace(g, `"stop":"tool_use",`, `"stopp":"x",`, 1), `trace_0003.json: requests[0].stopp: unknown field`},
		{"nested subagent", strings.Replace(g, `{"t":0,"type":"n","model":"small"`, `{"t":0,"type":"subagent","model":"small"`, 1), `trace_0003.json: requests[1].requests[0].type: a subagent's requests are n or s requests`},
		{"system blocks", strings.Replace(g, `"tool_tokens":3`, `"tool_tokens":30`, 1), `trace_0003.json: requests[0].hash_ids: the first request of session "trace_0001" has 2 blocks, fewer than the 8`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "trace_0003.json")
			if err := os.WriteFile(p, []byte(c.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			rd, err := Open(p, Options{Type: TypeWeka})
			if err == nil {
				_, err = rd.Next()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), p) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestWekaStream reads a trace from a stream, detected from its content.
func TestWekaStream(t *testing.T) {
	f, err := os.Open("testdata/weka/trace_0001.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := NewReader(f, "<stdin>", Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if _, err := rd.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if rd.Type() != TypeWeka || n != 7 {
		t.Errorf("type %s, %d rows", rd.Type(), n)
	}
}

func FuzzWeka(f *testing.F) {
	good, err := os.ReadFile("testdata/weka/trace_0001.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"id":"a","models":[],"block_size":1,"hash_id_scope":"local","requests":[{"t":0,"type":"n","model":"m","in":1,"out":1,"hash_ids":[7]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := fuzzRows(t, data, Options{Type: TypeWeka}, false, true)
		for _, r := range rows {
			sum := 0
			for _, s := range r.Agentic.Segments {
				if s.Blocks <= 0 {
					t.Fatalf("empty segment: %+v", r.Agentic.Segments)
				}
				sum += s.Blocks
			}
			if sum != len(r.HashIDs) || len(r.HashIDs) != (r.InputLength+r.Agentic.BlockSize-1)/r.Agentic.BlockSize {
				t.Fatalf("segments %+v do not cover %d blocks of in=%d", r.Agentic.Segments, len(r.HashIDs), r.InputLength)
			}
		}
	})
}

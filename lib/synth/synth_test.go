package synth

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aiperf/toolkit/lib/internal/fixture"
	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/tokenizer"
)

var (
	builtinOnce   sync.Once
	builtinCorpus *Corpus
	builtinErr    error
)

func corpus(t testing.TB) *Corpus {
	t.Helper()
	builtinOnce.Do(func() {
		tok, err := tokenizer.Builtin()
		if err != nil {
			builtinErr = err
			return
		}
		text, err := CorpusText()
		if err != nil {
			builtinErr = err
			return
		}
		builtinCorpus, builtinErr = NewCorpus(tok, text)
	})
	if builtinErr != nil {
		t.Fatal(builtinErr)
	}
	return builtinCorpus
}

func decodePrompt(t testing.TB, lit []byte) string {
	t.Helper()
	s, err := jsonx.Unquote(lit)
	if err != nil {
		t.Fatalf("prompt is not a JSON string: %v", err)
	}
	return s
}

type row struct {
	InputLength int      `json:"input_length"`
	HashIDs     []uint64 `json:"hash_ids"`
}

func mooncake(t testing.TB) []row {
	f, err := os.Open("../trace/testdata/mooncake_head1000.jsonl") // committed: a missing sample fails
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestExactLengthMooncake re-encodes synthesized prompts for the real Mooncake
// sample and requires the exact input_length for every row.
func TestExactLengthMooncake(t *testing.T) {
	fixture.SkipChecked(t, raceEnabled)
	c := corpus(t)
	s, err := New(c, Options{Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	rows := mooncake(t)
	if testing.Short() || raceEnabled {
		rows = rows[:100]
	}
	bad := 0
	for i, r := range rows {
		lit, err := s.AppendPrompt(nil, int64(i+1), r.InputLength, r.HashIDs)
		if err != nil {
			t.Fatalf("row %d: %v", i+1, err)
		}
		got := len(c.tok.Encode(decodePrompt(t, lit)))
		if got != r.InputLength {
			bad++
			if bad < 5 {
				t.Errorf("row %d: prompt re-encodes to %d tokens, want %d", i+1, got, r.InputLength)
			}
		}
	}
	t.Logf("%d rows, %d length mismatches, %d distinct blocks, corpus %d tokens / %d cuts", len(rows), bad, s.Blocks(), c.Tokens(), c.Cuts())
}

// TestSharedPrefix: rows sharing leading hash_ids share a byte-identical text prefix.
func TestSharedPrefix(t *testing.T) {
	s, err := New(corpus(t), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.AppendPrompt(nil, 1, 3*512, []uint64{7, 8, 9})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.AppendPrompt(nil, 2, 2*512+100, []uint64{7, 8, 10})
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := decodePrompt(t, a), decodePrompt(t, b)
	two, err := s.AppendPrompt(nil, 3, 2*512, []uint64{7, 8})
	if err != nil {
		t.Fatal(err)
	}
	prefix := decodePrompt(t, two)
	if !strings.HasPrefix(pa, prefix) || !strings.HasPrefix(pb, prefix) {
		t.Fatalf("rows sharing hash_ids 7, 8 do not share the prefix")
	}
	if pa[len(prefix):len(prefix)+50] == pb[len(prefix):len(prefix)+50] {
		t.Fatalf("different hash_ids gave the same block")
	}
}

// TestDeterministic: a block depends on (seed, hash_id, size) only, not on order.
func TestDeterministic(t *testing.T) {
	c := corpus(t)
	s1, _ := New(c, Options{Seed: 5})
	s2, _ := New(c, Options{Seed: 5})
	s3, _ := New(c, Options{Seed: 6})
	s2.AppendPrompt(nil, 1, 1024, []uint64{99, 100}) // warm s2's cache in another order
	a, _ := s1.AppendPrompt(nil, 9, 1000, []uint64{100, 101})
	b, _ := s2.AppendPrompt(nil, 9, 1000, []uint64{100, 101})
	d, _ := s3.AppendPrompt(nil, 9, 1000, []uint64{100, 101})
	if string(a) != string(b) {
		t.Fatal("same seed and hash_ids gave different text")
	}
	if string(a) == string(d) {
		t.Fatal("different seeds gave the same text")
	}
	p1, _ := s1.AppendPrompt(nil, 3, 700, nil)
	p2, _ := s2.AppendPrompt(nil, 3, 700, nil)
	if string(p1) != string(p2) {
		t.Fatal("plain prompts differ for the same line")
	}
}

func TestErrors(t *testing.T) {
	s, _ := New(corpus(t), Options{Seed: 1, BlockSize: 16})
	for _, c := range []struct {
		n    int
		ids  []uint64
		want string
	}{
		{0, nil, "input_length: must be positive"},
		{40, []uint64{1, 2}, "hash_ids: 2 hash_ids of 16-token blocks cannot make input_length 40"},
		{16, []uint64{1, 2}, "hash_ids: 2 hash_ids of 16-token blocks cannot make input_length 16"},
	} {
		_, err := s.AppendPrompt(nil, 1, c.n, c.ids)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AppendPrompt(%d, %v) = %v, want %q", c.n, c.ids, err, c.want)
		}
	}
	if _, err := s.AppendPrompt(nil, 10, 20, []uint64{3, 4}); err != nil {
		t.Fatal(err)
	}
	_, err := s.AppendPrompt(nil, 11, 16, []uint64{4})
	if err == nil || !strings.Contains(err.Error(), "hash_id 4 is a 16-token block here but a 4-token block on line 10") {
		t.Fatalf("got %v", err)
	}
}

func TestLongPlainPrompt(t *testing.T) {
	c := corpus(t)
	s, _ := New(c, Options{Seed: 3})
	n := c.Tokens() + 5000 // longer than the corpus
	lit, err := s.AppendPrompt(nil, 1, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.tok.Encode(decodePrompt(t, lit))); got != n {
		t.Fatalf("got %d tokens, want %d", got, n)
	}
}

func BenchmarkMooncakeRows(b *testing.B) {
	c := corpus(b)
	rows := mooncake(b)
	var buf []byte
	tokens := 0
	for _, r := range rows {
		tokens += r.InputLength
	}
	b.ResetTimer()
	for b.Loop() {
		s, _ := New(c, Options{Seed: 42})
		for i, r := range rows {
			buf, _ = s.AppendPrompt(buf[:0], int64(i+1), r.InputLength, r.HashIDs)
		}
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mtok/s")
}

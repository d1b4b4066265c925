package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/ingest"
	"github.com/aiperf/toolkit/lib/prefix"
	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/tokenizer"
	"github.com/aiperf/toolkit/lib/trace"
)

// cachedOf sends body to s in process and returns usage's prompt_tokens and
// prompt_tokens_details.cached_tokens.
func cachedOf(t testing.TB, s *Server, body []byte) (prompt, cached int64) {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
	var r struct {
		Usage struct {
			PromptTokens        int64 `json:"prompt_tokens"`
			PromptTokensDetails *struct {
				CachedTokens int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Usage.PromptTokensDetails == nil {
		t.Fatalf("reply %.200s: %v (or no prompt_tokens_details)", rec.Body.Bytes(), err)
	}
	return r.Usage.PromptTokens, r.Usage.PromptTokensDetails.CachedTokens
}

func chatBody(content string) []byte {
	b, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": content}}, "max_tokens": 1})
	return b
}

// TestPrefixCache: a prompt's leading full blocks are served once seen; a
// prompt that shares them and then differs is served the shared blocks
// only; a cache of two blocks evicts.
func TestPrefixCache(t *testing.T) {
	s, err := New(Config{Fast: true, PrefixCacheBlocks: 100, BlockBytes: 8})
	if err != nil {
		t.Fatal(err)
	}
	a := strings.Repeat("a", 8) + strings.Repeat("b", 8) + strings.Repeat("c", 8) + "dddd" // 3 full blocks + 4 bytes, 7 tokens
	for i, c := range []struct {
		text           string
		prompt, cached int64
	}{
		{a, 7, 0},
		{a, 7, 6}, // 24 of 28 bytes: 7 × 24/28
		{strings.Repeat("a", 8) + strings.Repeat("b", 8) + strings.Repeat("x", 12), 7, 4}, // 16 of 28
		{strings.Repeat("x", 8) + strings.Repeat("b", 8), 4, 0},                           // the same second block after a different first one
	} {
		p, got := cachedOf(t, s, chatBody(c.text))
		if p != c.prompt || got != c.cached {
			t.Errorf("request %d: got %d prompt, %d cached tokens, want %d, %d", i, p, got, c.prompt, c.cached)
		}
	}

	small, _ := New(Config{Fast: true, PrefixCacheBlocks: 2, BlockBytes: 8})
	cachedOf(t, small, chatBody(a)) // 3 blocks into a cache of 2: the first is evicted
	if _, got := cachedOf(t, small, chatBody(a)); got != 0 {
		t.Errorf("cache of 2 blocks, 3-block prompt again: got %d cached tokens, want 0 (its first block was evicted)", got)
	}
}

// TestPrefillPerToken: the first token moves by the prefill of the prompt's
// uncached tokens (read from the reply's clock, not measured).
func TestPrefillPerToken(t *testing.T) {
	s, _ := New(Config{TTFT: time.Millisecond, PrefixCacheBlocks: 100, BlockBytes: 4, PrefillPerToken: time.Second})
	text := strings.Repeat("abcd", 10) // 10 tokens, 10 blocks
	for i, want := range []time.Duration{10 * time.Second, 0} {
		q, err := parseRequest(chatBody(text), true)
		if err != nil {
			t.Fatal(err)
		}
		arrived := time.Unix(1000, 0)
		rg := newRNG(0, 1)
		clock := s.schedule(arrived, &rg)
		p := replyPlan{chat: true, arrived: arrived}
		s.plan(&p, &q, &rg, clock)
		if got := clock.first.Sub(arrived) - time.Millisecond; got != want {
			t.Errorf("request %d: prefill %v, want %v (cached %d of %d)", i, got, want, p.cached, p.prompt)
		}
	}
}

// TestPrefixMooncake replays the shipped Mooncake sample (1000 rows, 13.7M
// prompt tokens) against the mock in process, in trace order: with a cache
// that never evicts, the measured hit rate is within 2 percentage points of
// the trace's ideal; with a small cache, near the LRU simulation of the
// same capacity (in tokens).
func TestPrefixMooncake(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("replays 13.7M prompt tokens: run without -short and -race")
	}
	recs := mooncakeRecords(t)
	var textBytes, tokens int64
	for _, r := range recs {
		textBytes += int64(len(r.prompt))
		tokens += r.tokens
	}
	bytesPerToken := float64(textBytes) / float64(tokens)

	run := func(blocks int) prefix.Stats {
		s, err := New(Config{Fast: true, PrefixCacheBlocks: blocks})
		if err != nil {
			t.Fatal(err)
		}
		var st prefix.Stats
		for _, r := range recs {
			p, c := cachedOf(t, s, r.body)
			st.Tokens += p
			st.HitTokens += c
		}
		return st
	}
	ideal := prefix.NewIdeal(512)
	for _, r := range recs {
		ideal.Add(r.tokens, r.ids)
	}
	want := ideal.Stats().Rate()
	got := run(1 << 30).Rate()
	t.Logf("ideal %.2f%%, mock with a cache that never evicts %.2f%% (%.2f bytes a token)", 100*want, 100*got, bytesPerToken)
	if d := got - want; d > 0.02 || d < -0.02 {
		t.Errorf("measured hit rate %.2f%%, ideal %.2f%%: more than 2 points apart", 100*got, 100*want)
	}

	// A cache of 3000 trace blocks (1.5M tokens, a seventh of the sample's
	// distinct blocks), and the mock's of as many bytes.
	const traceBlocks = 3000
	lru := prefix.NewLRU(traceBlocks, 512)
	for _, r := range recs {
		lru.Add(r.tokens, r.ids)
	}
	mockBlocks := int(traceBlocks * 512 * bytesPerToken / DefaultBlockBytes)
	small := run(mockBlocks).Rate()
	t.Logf("LRU of %d blocks of 512 tokens %.2f%%, mock with %d blocks of %d bytes %.2f%%", traceBlocks, 100*lru.Stats().Rate(), mockBlocks, DefaultBlockBytes, 100*small)
	if d := small - lru.Stats().Rate(); d > 0.03 || d < -0.03 {
		t.Errorf("small cache: measured %.2f%%, LRU simulation %.2f%%: more than 3 points apart", 100*small, 100*lru.Stats().Rate())
	}
	if small >= got {
		t.Errorf("small cache %.2f%% not below the large one's %.2f%%", 100*small, 100*got)
	}
}

type mooncakeRecord struct {
	body   []byte
	prompt string
	tokens int64
	ids    []uint64
}

var mooncakeOnce struct {
	sync.Once
	recs []mooncakeRecord
	err  error
}

// mooncakeRecords tokenizes lib/trace's Mooncake sample (prompts from the
// builtin tokenizer, as aiperf-tokenize makes them) into chat bodies.
func mooncakeRecords(t *testing.T) []mooncakeRecord {
	mooncakeOnce.Do(func() {
		f, err := os.Open("../trace/testdata/mooncake_head1000.jsonl")
		if err != nil {
			mooncakeOnce.err = err
			return
		}
		defer f.Close()
		tr, err := trace.NewReader(f, "mooncake_head1000.jsonl", trace.Options{})
		if err != nil {
			mooncakeOnce.err = err
			return
		}
		var out bytes.Buffer
		if _, err := ingest.Run(context.Background(), tr, &out, ingest.Options{Tokenizer: tokenizer.Builtin}); err != nil {
			mooncakeOnce.err = err
			return
		}
		d := record.NewDecoder(&out, "records")
		var rec record.Record
		for {
			if err := d.Next(&rec); err == io.EOF {
				break
			} else if err != nil {
				mooncakeOnce.err = err
				return
			}
			prompt, _ := strconvUnquote(rec.Raw)
			mooncakeOnce.recs = append(mooncakeOnce.recs, mooncakeRecord{
				body: chatBody(prompt), prompt: prompt, tokens: int64(rec.InputTokens), ids: append([]uint64(nil), rec.HashIDs...),
			})
		}
	})
	if mooncakeOnce.err != nil {
		t.Fatal(mooncakeOnce.err)
	}
	return mooncakeOnce.recs
}

func strconvUnquote(lit []byte) (string, error) {
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}

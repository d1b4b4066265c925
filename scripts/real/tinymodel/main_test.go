package main

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
	"github.com/x448/float16"
)

// The model is read back with ollama's own GGUF decoder: the metadata ollama's qwen3 model
// reads, the vocabulary, and the rows that keep special tokens from ever being sampled.
func TestWriteReadBack(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tiny.gguf")
	p := params{layers: 2, hidden: 128, heads: 4, kvHeads: 4, headDim: 32, ffn: 384, vocab: 151936, ctx: 40960, ropeBase: 1e6, seed: 1}
	if err := run("../../../lib/tokenizer/builtin/qwen3", out, p); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := ggml.Decode(f, -1)
	if err != nil {
		t.Fatal(err)
	}
	kv := g.KV()
	for k, want := range map[string]uint32{
		"block_count": 2, "embedding_length": 128, "attention.head_count": 4, "attention.head_count_kv": 4,
		"attention.key_length": 32, "feed_forward_length": 384, "tokenizer.ggml.bos_token_id": qwen3EndOfText,
	} {
		if got := kv.Uint(k); got != want {
			t.Errorf("%s = %d, want %d", k, got, want)
		}
	}
	if a := kv.Architecture(); a != "qwen3" {
		t.Errorf("architecture %q", a)
	}
	if kv.Bool("tokenizer.ggml.add_bos_token", true) {
		t.Error("add_bos_token is not false: ollama would add a token to every prompt")
	}
	tokens := kv.Strings("tokenizer.ggml.tokens")
	types := kv.Ints("tokenizer.ggml.token_type")
	if len(tokens) != 151936 || len(types) != 151936 {
		t.Fatalf("%d tokens, %d types", len(tokens), len(types))
	}
	// Spot checks against the Qwen3 vocabulary: ids the HF tokenizer gives.
	for id, want := range map[int]string{9707: "Hello", 151643: "<|endoftext|>", 151645: "<|im_end|>"} {
		if tokens[id] != want {
			t.Errorf("token %d = %q, want %q", id, tokens[id], want)
		}
	}
	eos := int(kv.Uint("tokenizer.ggml.eos_token_id"))
	if tokens[eos] != "<|im_end|>" {
		t.Errorf("eos is %d %q", eos, tokens[eos])
	}

	var outW, embd *ggml.Tensor
	for _, tt := range g.Tensors().Items() {
		switch tt.Name {
		case "output.weight":
			outW = tt
		case "token_embd.weight":
			embd = tt
		}
	}
	if outW == nil || embd == nil {
		t.Fatal("output.weight or token_embd.weight missing")
	}
	row := func(tt *ggml.Tensor, id int) []float32 {
		b := make([]byte, 2*128)
		off := int64(g.Tensors().Offset + tt.Offset + uint64(id*len(b)))
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(f, b); err != nil {
			t.Fatal(err)
		}
		v := make([]float32, 128)
		for i := range v {
			v[i] = float16.Frombits(binary.LittleEndian.Uint16(b[2*i:])).Float32()
		}
		return v
	}
	suppressed := 0
	for id, ty := range types {
		if ty == tokenTypeNormal {
			continue
		}
		suppressed++
		if id != eos && id != 151643 && id != 151935 && id != 151669 {
			continue // read a few rows, not 293
		}
		r := row(outW, id)
		if r[0] != suppressW {
			t.Errorf("output row of %d %q: [0] = %v, want %v", id, tokens[id], r[0], float32(suppressW))
		}
		for i, x := range r[1:] {
			if x != 0 {
				t.Fatalf("output row of %d: [%d] = %v, want 0", id, i+1, x)
			}
		}
	}
	// Qwen3's 26 added tokens and the 267 padding rows.
	if suppressed != 26+267 {
		t.Errorf("%d suppressed tokens, want 293", suppressed)
	}
	if r := row(outW, 9707); r[0] != 0 {
		t.Errorf("an ordinary token's output row weighs the constant dimension: %v", r[0])
	}
	if r := row(embd, 9707); r[0] != constDim {
		t.Errorf("embedding[0] = %v, want %v", r[0], float32(constDim))
	}
}

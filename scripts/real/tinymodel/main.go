// Command tinymodel writes a tiny Qwen3 model with random weights as a GGUF file that ollama
// serves: the qwen3 architecture (2 layers, hidden size 128, 4 heads by default) with the real
// Qwen3 vocabulary, converted by ollama's own converter from a Qwen3 tokenizer.json, and written
// with the GGUF writer in ollama's fs/ggml package.
//
// It exists so that tests can run a real inference server where no model can be downloaded. Its
// output is nonsense text, but real tokens: prompt_tokens and completion_tokens are counted by
// ollama's own tokenizer, and the compute per token is that of a real (small) transformer.
//
// Random weights sample an end-of-sequence token within a few steps, so the output weights of
// every token that is not ordinary text (the control and added tokens, EOS among them, and the
// padding rows up to the model's vocabulary size) are pushed far down: every request then runs
// to exactly its max_tokens. How: hidden dimension 0 carries a constant through the whole
// residual stream (every embedding has it, no layer writes to it), so after the final RMSNorm it
// is always positive, and those tokens' output rows weigh only that dimension, with a large
// negative weight: their logits sit near -1000 whatever the input.
//
//	go run . -tokenizer DIR -o model.gguf
//
// DIR holds tokenizer.json (or tokenizer.json.zst) and tokenizer_config.json.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/klauspost/compress/zstd"
	"github.com/ollama/ollama/convert"
	"github.com/ollama/ollama/fs/ggml"
	"github.com/x448/float16"
)

// Token types in GGUF's tokenizer.ggml.token_type (ollama's convert package numbers them so).
const tokenTypeNormal = 1

// Qwen3's <|endoftext|>: its BOS id in published GGUFs. Qwen3 adds no BOS token; ollama's qwen3
// model defaults to adding token 0 when the file says nothing, which would add one token to every
// prompt_tokens count.
const qwen3EndOfText = 151643

type params struct {
	layers, hidden, heads, kvHeads, headDim, ffn, vocab, ctx int
	ropeBase                                                 float64
	seed                                                     uint64
	pooling                                                  int
}

func main() {
	var p params
	tokDir := flag.String("tokenizer", "", "folder with tokenizer.json or tokenizer.json.zst, and tokenizer_config.json")
	out := flag.String("o", "", "output GGUF file")
	flag.IntVar(&p.layers, "layers", 2, "transformer layers")
	flag.IntVar(&p.hidden, "hidden", 128, "hidden size")
	flag.IntVar(&p.heads, "heads", 4, "attention heads")
	flag.IntVar(&p.kvHeads, "kv-heads", 4, "key/value heads")
	flag.IntVar(&p.ffn, "ffn", 384, "feed-forward size")
	flag.IntVar(&p.vocab, "vocab", 151936, "vocabulary size (Qwen3's embedding rows; the tokenizer's 151,669 tokens are padded up to it)")
	flag.IntVar(&p.ctx, "ctx", 40960, "context length the model declares")
	flag.Float64Var(&p.ropeBase, "rope-base", 1e6, "RoPE frequency base")
	flag.Uint64Var(&p.seed, "seed", 1, "seed of the random weights")
	flag.IntVar(&p.pooling, "pooling", 0, "pooling type (ollama's: 1 mean, 2 CLS, 3 last token); with one, ollama serves the model on /v1/embeddings, not for generation")
	flag.Parse()
	if *tokDir == "" || *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: tinymodel -tokenizer DIR -o FILE [flags]")
		os.Exit(2)
	}
	if p.hidden%p.heads != 0 || p.heads%p.kvHeads != 0 {
		fmt.Fprintln(os.Stderr, "tinymodel: -hidden must be a multiple of -heads, -heads of -kv-heads")
		os.Exit(2)
	}
	p.headDim = p.hidden / p.heads
	if err := run(*tokDir, *out, p); err != nil {
		fmt.Fprintln(os.Stderr, "tinymodel:", err)
		os.Exit(1)
	}
}

func run(tokDir, out string, p params) error {
	fsys, err := hfFolder(tokDir, p)
	if err != nil {
		return err
	}
	// ollama's converter reads the vocabulary, merges, special tokens and token types from the
	// tokenizer files, and pads the vocabulary up to vocab_size. Its converter list has no dense
	// Qwen3ForCausalLM; Qwen2's shares Qwen3's tokenizer handling, and only its tokenizer is used.
	_, tok, err := convert.LoadModelMetadata(fsys)
	if err != nil {
		return fmt.Errorf("converting the tokenizer: %w", err)
	}
	if len(tok.Tokens) != p.vocab {
		return fmt.Errorf("tokenizer has %d tokens after padding, want %d", len(tok.Tokens), p.vocab)
	}
	kv := convert.ModelParameters{}.KV(tok)
	kv["general.architecture"] = "qwen3"
	kv["general.name"] = "aiperf-tiny-qwen3"
	kv["general.file_type"] = uint32(ggml.FileTypeF16)
	kv["block_count"] = uint32(p.layers)
	kv["context_length"] = uint32(p.ctx)
	kv["embedding_length"] = uint32(p.hidden)
	kv["feed_forward_length"] = uint32(p.ffn)
	kv["attention.head_count"] = uint32(p.heads)
	kv["attention.head_count_kv"] = uint32(p.kvHeads)
	kv["attention.key_length"] = uint32(p.headDim)
	kv["attention.value_length"] = uint32(p.headDim)
	kv["rope.freq_base"] = float32(p.ropeBase)
	kv["attention.layer_norm_rms_epsilon"] = float32(1e-6)
	kv["tokenizer.ggml.bos_token_id"] = uint32(qwen3EndOfText)
	kv["tokenizer.ggml.add_bos_token"] = false
	if p.pooling > 0 {
		kv["pooling_type"] = uint32(p.pooling)
	}

	suppressed := 0
	for _, t := range tok.Types {
		if t != tokenTypeNormal {
			suppressed++
		}
	}
	ts := tensors(p, tok.Types)

	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = ggml.WriteGGUF(f, kv, ts)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return err
	}
	fmt.Fprintf(os.Stderr, "tinymodel: %s: qwen3, %d layers, hidden %d, %d heads, vocabulary %d (%d special or padding tokens suppressed)\n",
		out, p.layers, p.hidden, p.heads, p.vocab, suppressed)
	return nil
}

// hfFolder builds the in-memory Hugging Face model folder that ollama's converter reads: the
// tokenizer files, and a config.json naming the architecture and vocabulary size.
func hfFolder(dir string, p params) (fstest.MapFS, error) {
	tj, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if errors.Is(err, os.ErrNotExist) {
		var z []byte
		if z, err = os.ReadFile(filepath.Join(dir, "tokenizer.json.zst")); err == nil {
			tj, err = unzstd(z)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	tc, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, err
	}
	cfg, err := json.Marshal(map[string]any{
		"architectures":           []string{"Qwen2ForCausalLM"},
		"vocab_size":              p.vocab,
		"hidden_size":             p.hidden,
		"num_hidden_layers":       p.layers,
		"num_attention_heads":     p.heads,
		"num_key_value_heads":     p.kvHeads,
		"intermediate_size":       p.ffn,
		"max_position_embeddings": p.ctx,
	})
	if err != nil {
		return nil, err
	}
	return fstest.MapFS{
		"config.json":           {Data: cfg},
		"tokenizer.json":        {Data: tj},
		"tokenizer_config.json": {Data: tc},
	}, nil
}

func unzstd(z []byte) ([]byte, error) {
	d, err := zstd.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return io.ReadAll(d)
}

// Weight scales. The constant dimension is large against the others (unit-variance embeddings),
// so after the final RMSNorm it stays near its largest share, about sqrt(hidden)*constDim/|h|.
const (
	constDim      = 8.0    // the value of hidden dimension 0 in every embedding
	suppressW     = -160.0 // output weight of dimension 0 for the suppressed tokens
	outputScale   = 0.25   // std of the ordinary tokens' output weights: logits spread ~±3
	residualScale = 0.5    // layer weights' std relative to 1/sqrt(fan-in)
)

// tensors makes the model's weights. Shapes are in GGUF order: the first dimension is the one
// that varies fastest in memory (a linear layer from n to m is {n, m}, m rows of n).
func tensors(p params, types []int32) []*ggml.Tensor {
	rng := rand.New(rand.NewPCG(p.seed, 0x61697065726621)) // "aiperf!"
	normal := func(n int, std float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * std)
		}
		return v
	}
	ones := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	// linear n→m whose output row 0 is zero when keepConst: such a layer never writes to the
	// residual stream's constant dimension.
	linear := func(n, m int, keepConst bool) []float32 {
		v := normal(n*m, residualScale/math.Sqrt(float64(n)))
		if keepConst {
			clear(v[:n])
		}
		return v
	}

	h, q, kvd := p.hidden, p.heads*p.headDim, p.kvHeads*p.headDim
	embd := normal(p.vocab*h, 1)
	for t := range p.vocab {
		embd[t*h] = constDim
	}
	out := normal(p.vocab*h, outputScale)
	for t := range p.vocab {
		row := out[t*h : (t+1)*h]
		if types[t] == tokenTypeNormal {
			row[0] = 0
		} else {
			clear(row)
			row[0] = suppressW
		}
	}

	ts := []*ggml.Tensor{
		f16("token_embd.weight", embd, h, p.vocab),
		f16("output.weight", out, h, p.vocab),
		f32("output_norm.weight", ones(h), h),
	}
	for i := range p.layers {
		b := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			f32(b+"attn_norm.weight", ones(h), h),
			f16(b+"attn_q.weight", linear(h, q, false), h, q),
			f16(b+"attn_k.weight", linear(h, kvd, false), h, kvd),
			f16(b+"attn_v.weight", linear(h, kvd, false), h, kvd),
			f32(b+"attn_q_norm.weight", ones(p.headDim), p.headDim),
			f32(b+"attn_k_norm.weight", ones(p.headDim), p.headDim),
			f16(b+"attn_output.weight", linear(q, h, true), q, h),
			f32(b+"ffn_norm.weight", ones(h), h),
			f16(b+"ffn_gate.weight", linear(h, p.ffn, false), h, p.ffn),
			f16(b+"ffn_up.weight", linear(h, p.ffn, false), h, p.ffn),
			f16(b+"ffn_down.weight", linear(p.ffn, h, true), p.ffn, h),
		)
	}
	return ts
}

// data is a tensor's contents; WriteTo writes them little-endian as F32 or F16.
type data struct {
	v    []float32
	half bool
}

func (d data) WriteTo(w io.Writer) (int64, error) {
	var b []byte
	if d.half {
		b = make([]byte, 2*len(d.v))
		for i, x := range d.v {
			binary.LittleEndian.PutUint16(b[2*i:], float16.Fromfloat32(x).Bits())
		}
	} else {
		b = make([]byte, 4*len(d.v))
		for i, x := range d.v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
	}
	n, err := w.Write(b)
	return int64(n), err
}

func f16(name string, v []float32, shape ...int) *ggml.Tensor {
	return tensor(name, ggml.TensorTypeF16, data{v, true}, shape)
}

func f32(name string, v []float32, shape ...int) *ggml.Tensor {
	return tensor(name, ggml.TensorTypeF32, data{v, false}, shape)
}

func tensor(name string, kind ggml.TensorType, d data, shape []int) *ggml.Tensor {
	n := 1
	s := make([]uint64, len(shape))
	for i, x := range shape {
		s[i] = uint64(x)
		n *= x
	}
	if n != len(d.v) {
		panic(fmt.Sprintf("%s: %d values for shape %v", name, len(d.v), shape))
	}
	return &ggml.Tensor{Name: name, Kind: uint32(kind), Shape: s, WriterTo: d}
}

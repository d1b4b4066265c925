package tokenizer

import (
	"fmt"
	"sync"

	builtinfiles "github.com/aiperf/toolkit/lib/tokenizer/builtin"
)

// The embedded files live in package builtin (see builtin/qwen3/README.md).
var builtinFS = builtinfiles.FS

const (
	builtinName     = builtinfiles.Name
	builtinRevision = builtinfiles.Revision
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
	z, err := builtinFS.ReadFile(builtinfiles.TokenizerFile)
	if err != nil {
		return nil, err
	}
	data, err := unzstd(z)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: builtin: %w", err)
	}
	cfg, err := builtinFS.ReadFile(builtinfiles.ConfigFile)
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

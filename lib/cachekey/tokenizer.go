package cachekey

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/aiperf/toolkit/lib/digest"
	"github.com/aiperf/toolkit/lib/tokenizer/builtin"
	sha256 "github.com/minio/sha256-simd"
)

var builtinTokenizer = sync.OnceValue(func() Tokenizer {
	t := Tokenizer{Name: builtin.Name, Revision: builtin.Revision, Files: make(map[string]digest.Sum)}
	for _, name := range []string{builtin.TokenizerFile, builtin.ConfigFile} {
		b, err := builtin.FS.ReadFile(name)
		if err != nil {
			panic("cachekey: builtin tokenizer file missing from the binary: " + err.Error())
		}
		t.Files[filepath.Base(name)] = digest.Sum(sha256.Sum256(b))
	}
	return t
})

// BuiltinTokenizer returns the identity of the tokenizer built into the
// binaries: its name and revision and the SHA-256 of its embedded files as
// they are embedded (tokenizer.json.zst compressed), without decoding them.
func BuiltinTokenizer() Tokenizer {
	t := builtinTokenizer()
	files := make(map[string]digest.Sum, len(t.Files))
	for n, s := range t.Files {
		files[n] = s
	}
	t.Files = files
	return t
}

// TokenizerFiles returns the identity of a tokenizer read from files: name
// and revision as given, and the digest of each path, by its base name.
// Digests go through h, so its memo applies.
func TokenizerFiles(ctx context.Context, h *digest.Hasher, name, revision string, paths ...string) (Tokenizer, error) {
	t := Tokenizer{Name: name, Revision: revision, Files: make(map[string]digest.Sum, len(paths))}
	for _, p := range paths {
		base := filepath.Base(p)
		if _, dup := t.Files[base]; dup {
			return t, fmt.Errorf("cachekey: two tokenizer files named %s", base)
		}
		s, err := h.File(ctx, p)
		if err != nil {
			return t, fmt.Errorf("cachekey: tokenizer: %w", err)
		}
		t.Files[base] = s
	}
	return t, nil
}

package cachekey

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/digest"
)

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

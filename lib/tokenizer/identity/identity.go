// Package identity names a tokenizer as a cache key records it
// (cachekey.Tokenizer): the builtin one by its embedded files, any other by
// the files lib/tokenizer/locate finds for it. It is apart from lib/cachekey
// so that a binary that keys stores without naming a tokenizer
// (aiperf-pack, aiperf-cache) does not link the embedded one.
package identity

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/digest"
	"github.com/aiperf/toolkit/lib/tokenizer/builtin"
	"github.com/aiperf/toolkit/lib/tokenizer/locate"
	sha256 "github.com/minio/sha256-simd"
)

var builtinIdentity = sync.OnceValue(func() cachekey.Tokenizer {
	t := cachekey.Tokenizer{Name: builtin.Name, Revision: builtin.Revision, Files: make(map[string]digest.Sum)}
	for _, name := range []string{builtin.TokenizerFile, builtin.ConfigFile} {
		b, err := builtin.FS.ReadFile(name)
		if err != nil {
			panic("identity: builtin tokenizer file missing from the binary: " + err.Error())
		}
		t.Files[filepath.Base(name)] = digest.Sum(sha256.Sum256(b))
	}
	return t
})

// Builtin returns the identity of the tokenizer built into the binaries:
// its name and revision and the SHA-256 of its embedded files as they are
// embedded (tokenizer.json.zst compressed), without decoding them.
func Builtin() cachekey.Tokenizer {
	t := builtinIdentity()
	files := make(map[string]digest.Sum, len(t.Files))
	for n, s := range t.Files {
		files[n] = s
	}
	t.Files = files
	return t
}

// Of names the tokenizer of --tokenizer spec (isBuiltin: the builtin one)
// by the files aiperf-tokenize reads (locate finds them for the stage and
// for aiperf-hash key alike), digested through h (and its memo, if it has
// one).
func Of(ctx context.Context, h *digest.Hasher, spec string, isBuiltin bool) (cachekey.Tokenizer, error) {
	if isBuiltin {
		return Builtin(), nil
	}
	f, err := locate.Find(spec)
	if err != nil {
		return cachekey.Tokenizer{}, err // the words of aiperf-tokenize, which finds it the same way
	}
	paths := []string{f.File}
	if f.Config != "" {
		paths = append(paths, f.Config)
	}
	t, err := cachekey.TokenizerFiles(ctx, h, f.Name, f.Revision, paths...)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return t, fmt.Errorf("tokenizer: %s: %w", pe.Path, pe.Err)
	}
	return t, err
}

// Package locate finds the files of a tokenizer named by a path, and the
// name and revision it is known by, without reading or decoding them. It is
// apart from package tokenizer (which uses it in Load) so that a cache key
// can name a tokenizer by the digest of its files without linking the
// tokenizer and its regular-expression engine.
package locate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ConfigFile is the name of the optional file beside tokenizer.json that
// supplies the BOS and EOS tokens.
const ConfigFile = "tokenizer_config.json"

// Files are the files a tokenizer is read from.
type Files struct {
	// File is the tokenizer.json (optionally zstd-compressed, *.zst) or
	// .tiktoken rank file.
	File string
	// Config is the tokenizer_config.json beside File, or "" when there is
	// none (or File is a .tiktoken file, which reads no config).
	Config string
	// Name is "org/name" inside a Hugging Face cache
	// (.../models--org--name/snapshots/REV/file), else the folder that holds
	// File, or the file's own name without .tiktoken for a .tiktoken file.
	Name string
	// Revision is REV inside a Hugging Face cache, else "".
	Revision string
}

// Tiktoken reports whether File is a .tiktoken rank file.
func (f Files) Tiktoken() bool { return strings.HasSuffix(f.File, ".tiktoken") }

// Find resolves path, which may be
//
//   - a tokenizer.json file (optionally zstd-compressed, named *.zst),
//   - a .tiktoken rank file,
//   - a directory that contains tokenizer.json,
//   - a Hugging Face cache folder models--ORG--NAME (its refs/main names
//     the snapshot, else its only snapshot) or one of its snapshots/REV
//     folders.
func Find(path string) (Files, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Files{}, fmt.Errorf("tokenizer: %w", err)
	}
	file := path
	if fi.IsDir() {
		if file, err = findInDir(path); err != nil {
			return Files{}, err
		}
	}
	f := Files{File: file}
	f.Name, f.Revision = nameFromPath(file)
	if f.Tiktoken() {
		return f, nil
	}
	cfg := filepath.Join(filepath.Dir(file), ConfigFile)
	switch _, err := os.Stat(cfg); {
	case err == nil:
		f.Config = cfg
	case !errors.Is(err, fs.ErrNotExist):
		return Files{}, fmt.Errorf("tokenizer: %w", err)
	}
	return f, nil
}

// findInDir finds tokenizer.json in dir, following a Hugging Face cache
// folder's refs/main to its snapshot.
func findInDir(dir string) (string, error) {
	f := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(f); err == nil {
		return f, nil
	}
	snaps := filepath.Join(dir, "snapshots")
	if ref, err := os.ReadFile(filepath.Join(dir, "refs", "main")); err == nil {
		f = filepath.Join(snaps, strings.TrimSpace(string(ref)), "tokenizer.json")
		if _, err := os.Stat(f); err != nil {
			return "", fmt.Errorf("tokenizer: %s: refs/main points to a snapshot without tokenizer.json: %w", dir, err)
		}
		return f, nil
	}
	if ents, err := os.ReadDir(snaps); err == nil && len(ents) == 1 && ents[0].IsDir() {
		f = filepath.Join(snaps, ents[0].Name(), "tokenizer.json")
		if _, err := os.Stat(f); err == nil {
			return f, nil
		}
	}
	return "", fmt.Errorf("tokenizer: no tokenizer.json in %s", dir)
}

// nameFromPath names a tokenizer file (see Files.Name and Files.Revision).
func nameFromPath(file string) (name, rev string) {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	dir := filepath.Dir(abs)
	if snaps := filepath.Dir(dir); filepath.Base(snaps) == "snapshots" {
		repo := filepath.Base(filepath.Dir(snaps))
		if r, ok := strings.CutPrefix(repo, "models--"); ok {
			return strings.ReplaceAll(r, "--", "/"), filepath.Base(dir)
		}
	}
	if strings.HasSuffix(abs, ".tiktoken") {
		return strings.TrimSuffix(filepath.Base(abs), ".tiktoken"), ""
	}
	return filepath.Base(dir), ""
}

package locate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	plain := filepath.Join(root, "plain")
	write(t, filepath.Join(plain, "tokenizer.json"))
	write(t, filepath.Join(plain, ConfigFile))
	bare := filepath.Join(root, "bare")
	write(t, filepath.Join(bare, "tokenizer.json.zst"))
	hf := filepath.Join(root, "models--org--name")
	write(t, filepath.Join(hf, "snapshots", "abc123", "tokenizer.json"))
	write(t, filepath.Join(hf, "snapshots", "def456", "tokenizer.json"))
	write(t, filepath.Join(hf, "refs", "main")) // replaced below
	if err := os.WriteFile(filepath.Join(hf, "refs", "main"), []byte("def456\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(root, "models--solo--x")
	write(t, filepath.Join(one, "snapshots", "r1", "tokenizer.json"))
	tik := filepath.Join(root, "cl100k_base.tiktoken")
	write(t, tik)
	write(t, filepath.Join(root, ConfigFile)) // beside the .tiktoken file: not read

	for _, c := range []struct {
		path string
		want Files
	}{
		{plain, Files{File: filepath.Join(plain, "tokenizer.json"), Config: filepath.Join(plain, ConfigFile), Name: "plain"}},
		{filepath.Join(plain, "tokenizer.json"), Files{File: filepath.Join(plain, "tokenizer.json"), Config: filepath.Join(plain, ConfigFile), Name: "plain"}},
		{filepath.Join(bare, "tokenizer.json.zst"), Files{File: filepath.Join(bare, "tokenizer.json.zst"), Name: "bare"}},
		{hf, Files{File: filepath.Join(hf, "snapshots", "def456", "tokenizer.json"), Name: "org/name", Revision: "def456"}},
		{filepath.Join(hf, "snapshots", "abc123"), Files{File: filepath.Join(hf, "snapshots", "abc123", "tokenizer.json"), Name: "org/name", Revision: "abc123"}},
		{one, Files{File: filepath.Join(one, "snapshots", "r1", "tokenizer.json"), Name: "solo/x", Revision: "r1"}},
		{tik, Files{File: tik, Name: "cl100k_base"}},
	} {
		got, err := Find(c.path)
		if err != nil || got != c.want {
			t.Errorf("Find(%s) = %+v, %v; want %+v", c.path, got, err, c.want)
		}
	}
	if _, err := Find(filepath.Join(root, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := Find(bare); err == nil {
		t.Error("a folder without tokenizer.json was accepted")
	}
	if err := os.WriteFile(filepath.Join(hf, "refs", "main"), []byte("gone"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(hf); err == nil {
		t.Error("refs/main naming a missing snapshot was accepted")
	}
}

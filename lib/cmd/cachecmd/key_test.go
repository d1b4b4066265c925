package cachecmd

import (
	"os/exec"
	"strings"
	"testing"
)

// -v ensure prints CMD shell-quoted: pasted into sh, it gives CMD's words.
func TestShellQuote(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	argv := []string{"sh", "-c", `aiperf-tokenize t | aiperf-pack -o "$AIPERF_CACHE_OUT"`, "it's", "", "a\nb", "plain-word_1.2,x=y:z@%+/", "$HOME", "*"}
	q := shellQuote(argv)
	if !strings.HasPrefix(q, "sh -c 'aiperf-tokenize t | aiperf-pack -o \"$AIPERF_CACHE_OUT\"' 'it'\\''s' '' ") {
		t.Errorf("quoted: %s", q)
	}
	out, err := exec.Command(sh, "-c", "set -- "+q+`; for a in "$@"; do printf '[%s]' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, a := range argv {
		want.WriteString("[" + a + "]")
	}
	if string(out) != want.String() {
		t.Fatalf("sh read %q back as %s, want %s", q, out, want.String())
	}
}

package digest

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: each listed file is digested and compared, in the list's
// order; malformed lines, unreadable and mismatched files are counted;
// "-" reads Stdin.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, bad := write("good", "x"), write("bad", "changed")
	missing := filepath.Join(dir, "missing")
	sumStdin := Sum(sha256.Sum256([]byte("from stdin"))).String()
	list := FormatLine(Sum(sha256.Sum256([]byte("x"))), good) +
		"not a checksum line\n" +
		FormatLine(Sum(sha256.Sum256([]byte("x"))), bad) +
		FormatLine(Sum(sha256.Sum256([]byte("x"))), missing) +
		sumStdin + "  -\n"
	var h Hasher
	var lines []int
	var got []string
	opt := CheckOptions{
		Stdin:       strings.NewReader("from stdin"),
		OnMalformed: func(line int, err error) { lines = append(lines, line) },
		OnFile: func(e ListEntry, ok bool, err error) {
			v := "OK"
			switch {
			case err != nil:
				v = "unreadable"
			case !ok:
				v = "FAILED"
			}
			got = append(got, filepath.Base(e.Name)+" "+v)
		},
	}
	res, err := h.Check(context.Background(), strings.NewReader(list), opt)
	if err != nil {
		t.Fatal(err)
	}
	want := CheckResult{Malformed: 1, Unreadable: 1, Mismatched: 1, Verified: 3}
	if res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	if strings.Join(got, ", ") != "good OK, bad FAILED, missing unreadable, - OK" || len(lines) != 1 || lines[0] != 2 {
		t.Errorf("files %q, malformed lines %v", got, lines)
	}
	if !h.Refresh {
		t.Error("Check left the memo trusted")
	}

	// Missing files ignored; a list read from stdin may not name "-".
	opt = CheckOptions{IgnoreMissing: true, FromStdin: true}
	res, err = h.Check(context.Background(), strings.NewReader(list), opt)
	if err != nil || res != (CheckResult{Malformed: 2, Mismatched: 1, Verified: 2}) {
		t.Errorf("ignoring missing files, from stdin: %+v %v", res, err)
	}
}

func TestCheckErrors(t *testing.T) {
	var h Hasher
	if _, err := h.Check(context.Background(), strings.NewReader("# only a comment\nnonsense\n"), CheckOptions{}); !errors.Is(err, ErrNoChecksumLines) {
		t.Errorf("no lines: %v", err)
	}
	boom := errors.New("boom")
	if _, err := h.Check(context.Background(), errReader{boom}, CheckOptions{}); !errors.Is(err, boom) {
		t.Errorf("a list that cannot be read: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	list := FormatLine(Sum{}, "a") + FormatLine(Sum{}, "b")
	if _, err := h.Check(ctx, strings.NewReader(list), CheckOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

package cache

import (
	"io"
	"strings"
	"testing"
)

// zeros is an endless first line: NUL bytes, never a newline.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// KEY - reads at most a key's length and a line end: a 500 MB first line
// used to be read whole (1 GB of memory) before being refused.
func TestReadKeyLineIsBounded(t *testing.T) {
	z := &zeros{}
	if _, err := ReadKeyLine(z); err == nil || !strings.Contains(err.Error(), "longer than any key") {
		t.Fatalf("endless line: %v", err)
	}
	if z.n > maxKeyLine+1 {
		t.Fatalf("read %d bytes of an endless line, want at most %d", z.n, maxKeyLine+1)
	}
	// Nothing after the line is consumed: ensure hands the rest to CMD.
	r := strings.NewReader("sha256:ab\r\nrest of stdin")
	line, err := ReadKeyLine(r)
	if err != nil || line != "sha256:ab\r" {
		t.Fatalf("got %q %v", line, err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "rest of stdin" {
		t.Fatalf("left %q on stdin", rest)
	}
	if line, err := ReadKeyLine(strings.NewReader("k")); err != nil || line != "k" {
		t.Fatalf("a key without a newline: %q %v", line, err)
	}
	if _, err := ReadKeyLine(strings.NewReader("")); err == nil {
		t.Fatal("empty stdin gave a key")
	}
	long := strings.Repeat("a", maxKeyLine-2) + "\n" // the longest key
	if line, err := ReadKeyLine(strings.NewReader(long)); err != nil || len(line) != maxKeyLine-2 {
		t.Fatalf("the longest key: %d bytes, %v", len(line), err)
	}
}

// countReader counts what is read from it.
type countReader struct {
	r *strings.Reader
	n int
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzReadKeyLine: KEY - on any stdin reads at most a key's line, never
// past its newline, and yields a line without one.
func FuzzReadKeyLine(f *testing.F) {
	f.Add("sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\nrest")
	f.Add("named-key\r\n")
	f.Add(strings.Repeat("\x00", 300))
	f.Fuzz(func(t *testing.T, in string) {
		r := &countReader{r: strings.NewReader(in)}
		line, err := ReadKeyLine(r)
		if r.n > maxKeyLine+1 {
			t.Fatalf("read %d bytes", r.n)
		}
		if err != nil {
			return
		}
		if strings.Contains(line, "\n") || !strings.HasPrefix(in, line) {
			t.Fatalf("line %q from %q", line, in)
		}
		if i := strings.IndexByte(in, '\n'); i >= 0 && r.n != i+1 {
			t.Fatalf("read %d bytes, the first line ends at %d", r.n, i+1)
		}
	})
}

func TestCheckExplain(t *testing.T) {
	text := "aiperf cache key v1\npack.model=\"m\"\n"
	if err := CheckExplain(digestKey(text), text); err != nil {
		t.Errorf("its own text: %v", err)
	}
	if err := CheckExplain(digestKey(text), text+"x"); err == nil || !strings.Contains(err.Error(), "it explains another key") {
		t.Errorf("another key's text: %v", err)
	}
	if err := CheckExplain(MustParseKey("named"), "anything"); err != nil {
		t.Errorf("a named key: %v", err)
	}
}

func TestSelect(t *testing.T) {
	c, _ := testCache(t)
	f := t.TempDir() + "/f"
	writeFile(t, f, "x")
	mustPopulate(t, c, MustParseKey("a"), f)
	all, err := c.Select(nil)
	if err != nil || len(all) != 1 || all[0].Key != MustParseKey("a") {
		t.Fatalf("all: %+v %v", all, err)
	}
	got, err := c.Select([]Key{MustParseKey("b"), MustParseKey("a")})
	if err != nil || len(got) != 2 || got[0].Key != MustParseKey("b") || got[0].Err != ErrMiss || got[0].Dir != "" || got[1].Dir == "" {
		t.Fatalf("b, a: %+v %v", got, err)
	}
}

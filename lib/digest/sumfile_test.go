package digest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var hx = Sum(sha256.Sum256([]byte("x"))).String()

func TestFormatLine(t *testing.T) {
	s := Sum(sha256.Sum256(nil))
	for _, tc := range []struct{ name, line, check string }{
		{"plain", s.String() + "  plain\n", "plain"},
		{"sp ace", s.String() + "  sp ace\n", "sp ace"},
		{"back\\slash", "\\" + s.String() + "  back\\\\slash\n", "back\\slash"},
		{"new\nline", "\\" + s.String() + "  new\\nline\n", "\\new\\nline"},
		{"cr\rx", "\\" + s.String() + "  cr\\rx\n", "cr\rx"},
		{"a\\b\nc\rd", "\\" + s.String() + "  a\\\\b\\nc\\rd\n", "\\a\\\\b\\nc\\rd"},
		{"-", s.String() + "  -\n", "-"},
	} {
		if got := FormatLine(s, tc.name); got != tc.line {
			t.Errorf("FormatLine(%q): got %q, want %q", tc.name, got, tc.line)
		}
		if got := CheckName(tc.name); got != tc.check {
			t.Errorf("CheckName(%q): got %q, want %q", tc.name, got, tc.check)
		}
		lr := NewListReader(strings.NewReader(tc.line), false)
		if e, err := lr.Next(); err != nil || e.Name != tc.name || e.Sum != s {
			t.Errorf("parse of %q: got %+v %v", tc.line, e, err)
		}
	}
}

// listCases are lines whose verdicts were read off coreutils 9.1's
// sha256sum -c -w; "" means improperly formatted.
var listCases = []struct {
	lines []string
	names []string
}{
	{[]string{hx + "  a"}, []string{"a"}},
	{[]string{"  \t" + hx + "  a"}, []string{"a"}},
	{[]string{hx + "  a\r"}, []string{"a"}},
	{[]string{strings.ToUpper(hx) + "  a"}, []string{"a"}},
	{[]string{hx + " *a"}, []string{"a"}},
	{[]string{hx + "  *a"}, []string{"*a"}},
	{[]string{hx + "  sp ace "}, []string{"sp ace "}},
	{[]string{hx + "\ta"}, []string{"a"}},
	{[]string{hx + " a", hx + "  b"}, []string{"a", " b"}},
	{[]string{hx + "  a", hx + " b"}, []string{"a", ""}},
	{[]string{hx + "  "}, []string{" "}},
	{[]string{hx + " "}, []string{""}},
	{[]string{hx + "a"}, []string{""}},
	{[]string{hx[1:] + "  a"}, []string{""}},
	{[]string{hx + "0  a"}, []string{""}},
	{[]string{"g" + hx[1:] + "  a"}, []string{""}},
	{[]string{"#" + hx + "  a", "", hx + "  b"}, []string{"b"}},
	{[]string{"\\" + hx + "  a\\\\b"}, []string{"a\\b"}},
	{[]string{"\\" + hx + "  a\\nb\\rc"}, []string{"a\nb\rc"}},
	{[]string{"\\" + hx + "  a\\xb"}, []string{""}},
	{[]string{"\\" + hx + "  a\\"}, []string{""}},
	{[]string{hx + "  a\\\\b"}, []string{"a\\\\b"}},
	{[]string{"SHA256 (a) = " + hx}, []string{"a"}},
	{[]string{"SHA256(a)=" + hx}, []string{"a"}},
	{[]string{"SHA256 (a) =  " + strings.ToUpper(hx)}, []string{"a"}},
	{[]string{"SHA256 (a)b) = " + hx}, []string{"a)b"}},
	{[]string{"SHA256 (a = " + hx}, []string{""}},
	{[]string{"SHA256 (a) = " + hx + " "}, []string{""}},
	{[]string{"SHA256 (a) = " + hx + "0"}, []string{""}},
	{[]string{"SHA256 (a) " + hx}, []string{""}},
	{[]string{"SHA256  (a) = " + hx}, []string{""}},
	{[]string{"\\SHA256 (a\\\\b) = " + hx}, []string{"a\\b"}},
	{[]string{"SHA256 () = " + hx}, []string{"\x00empty"}},
	{[]string{"MD5 (a) = " + hx}, []string{""}},
}

// TestListReader checks the parser on listCases.
func TestListReader(t *testing.T) {
	for _, tc := range listCases {
		lr := NewListReader(strings.NewReader(strings.Join(tc.lines, "\n")+"\n"), false)
		var got []string
		for {
			e, err := lr.Next()
			if err == io.EOF {
				break
			}
			switch {
			case errors.Is(err, ErrListFormat):
				got = append(got, "")
			case err != nil:
				t.Fatal(err)
			case e.Name == "":
				got = append(got, "\x00empty")
			default:
				got = append(got, e.Name)
				if e.Sum.String() != hx {
					t.Errorf("%q: sum %v", tc.lines, e.Sum)
				}
			}
		}
		if !slices.Equal(got, tc.names) {
			t.Errorf("%q: got %q, want %q", tc.lines, got, tc.names)
		}
	}
}

// TestListAgainstSha256sum runs sha256sum -c -w on every case and checks
// that it finds the same lines improperly formatted (when it is installed).
func TestListAgainstSha256sum(t *testing.T) {
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("sha256sum not installed")
	}
	dir := t.TempDir()
	re := regexp.MustCompile(`: (\d+): improperly formatted`)
	for i, tc := range listCases {
		list := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(list, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd := exec.Command("sha256sum", "-c", "-w", list)
		cmd.Dir = dir
		cmd.Stderr = &stderr
		cmd.Run()
		var theirs []int
		for _, m := range re.FindAllStringSubmatch(stderr.String(), -1) {
			n, _ := strconv.Atoi(m[1])
			theirs = append(theirs, n)
		}
		var ours []int
		lr := NewListReader(bytes.NewReader([]byte(strings.Join(tc.lines, "\n")+"\n")), false)
		for {
			e, err := lr.Next()
			if err == io.EOF {
				break
			}
			if errors.Is(err, ErrListFormat) {
				ours = append(ours, e.Line)
			}
		}
		if !slices.Equal(ours, theirs) {
			t.Errorf("%q: improperly formatted lines: ours %v, sha256sum's %v (%s)", tc.lines, ours, theirs, stderr.String())
		}
	}
}

func TestListStdinDash(t *testing.T) {
	for _, stdin := range []bool{false, true} {
		lr := NewListReader(strings.NewReader(hx+"  -\n"), stdin)
		_, err := lr.Next()
		if stdin != errors.Is(err, ErrListFormat) {
			t.Errorf("list on stdin %v: got %v", stdin, err)
		}
	}
}

func TestListLongLine(t *testing.T) {
	long := hx + "  " + strings.Repeat("n", maxListLine)
	lr := NewListReader(strings.NewReader(long+"\n"+hx+"  ok\n"+hx+"  "+strings.Repeat("m", maxListLine)), false)
	var got []string
	for {
		e, err := lr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, ErrListFormat) {
			got = append(got, fmt.Sprint("bad line ", e.Line))
			continue
		}
		must(t, err)
		got = append(got, e.Name)
	}
	if want := []string{"bad line 1", "ok", "bad line 3"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

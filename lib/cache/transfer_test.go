package cache

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// exported returns a cache holding one entry (a store and inputs.json) and
// its export stream.
func exported(t *testing.T) (*Cache, Key, []byte) {
	t.Helper()
	c, _ := testCache(t)
	dir := t.TempDir()
	writeStore(t, filepath.Join(dir, "s.aipk"), 30, 700, 11)
	writeFile(t, filepath.Join(dir, "inputs.json"), `{"data":["x"]}`)
	k := digestKey("export")
	if _, _, err := c.Populate(k, []string{filepath.Join(dir, "s.aipk"), filepath.Join(dir, "inputs.json")}, PopulateOptions{Explain: "why"}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.Export(t.Context(), k, &buf); err != nil {
		t.Fatal(err)
	}
	return c, k, buf.Bytes()
}

func TestExportImport(t *testing.T) {
	src, k, stream := exported(t)
	dst, _ := testCache(t)
	e, stored, err := dst.Import(t.Context(), bytes.NewReader(stream), ImportOptions{})
	if err != nil || !stored {
		t.Fatalf("import: %v stored=%v", err, stored)
	}
	if _, err := dst.Verify(k); err != nil {
		t.Fatal(err)
	}
	se, _ := src.Lookup(k)
	if e.Manifest.Explain != "why" || e.Manifest.CreatedUnixNS != se.Manifest.CreatedUnixNS {
		t.Errorf("imported manifest %+v lost fields of %+v", e.Manifest, se.Manifest)
	}
	for _, f := range se.Manifest.Files {
		if !sameBytes(t, filepath.Join(se.Dir, f.Name), filepath.Join(e.Dir, f.Name)) {
			t.Errorf("%s differs after the round trip", f.Name)
		}
	}
	// Importing again is a no-op that still reads the stream.
	if _, stored, err := dst.Import(t.Context(), bytes.NewReader(stream), ImportOptions{}); err != nil || stored {
		t.Fatalf("second import: %v stored=%v", err, stored)
	}
	// An export is a function of the entry.
	var again bytes.Buffer
	if err := src.Export(t.Context(), k, &again); err != nil || !bytes.Equal(again.Bytes(), stream) {
		t.Errorf("a second export differs (%v)", err)
	}
	if err := src.Export(t.Context(), MustParseKey("nope"), &again); !errors.Is(err, ErrMiss) {
		t.Errorf("export of a missing key: %v", err)
	}
	// A cap refuses the entry.
	capped, _ := testCache(t)
	if _, _, err := capped.Import(t.Context(), bytes.NewReader(stream), ImportOptions{MaxSize: 1000}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("import over the cap: %v", err)
	}
}

// member is one tar member of a hand-made stream.
type member struct {
	hdr  tar.Header
	body []byte
}

// untar splits an export stream into its members.
func untar(t *testing.T, stream []byte) []member {
	t.Helper()
	zr, err := zstd.NewReader(bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var out []member
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		var b bytes.Buffer
		b.ReadFrom(tr)
		out = append(out, member{*h, b.Bytes()})
	}
	return out
}

// retar builds a stream from members; raw tar bytes when compress is false.
func retar(t testing.TB, ms []member, compress bool) []byte {
	t.Helper()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, m := range ms {
		h := m.hdr
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write(m.body)
	}
	tw.Close()
	if !compress {
		return tb.Bytes()
	}
	var zb bytes.Buffer
	zw, _ := zstd.NewWriter(&zb)
	zw.Write(tb.Bytes())
	zw.Close()
	return zb.Bytes()
}

func TestImportRefusesHostileStreams(t *testing.T) {
	_, _, stream := exported(t)
	good := untar(t, stream)
	if len(good) != 3 || good[0].hdr.Name != "manifest" {
		t.Fatalf("export members: %d, first %q", len(good), good[0].hdr.Name)
	}
	clone := func() []member {
		out := make([]member, len(good))
		for i, m := range good {
			out[i] = member{m.hdr, bytes.Clone(m.body)}
		}
		return out
	}
	store, inputs := 1, 2
	cases := []struct {
		name string
		make func() []byte
		want string
	}{
		{"traversal", func() []byte { ms := clone(); ms[inputs].hdr.Name = "../../inputs.json"; return retar(t, ms, true) }, "not a plain name"},
		{"absolute", func() []byte { ms := clone(); ms[inputs].hdr.Name = "/etc/passwd"; return retar(t, ms, true) }, "not a plain name"},
		{"subfolder", func() []byte { ms := clone(); ms[inputs].hdr.Name = "sub/inputs.json"; return retar(t, ms, true) }, "not a plain name"},
		{"symlink", func() []byte {
			ms := clone()
			ms[inputs] = member{tar.Header{Typeflag: tar.TypeSymlink, Name: "inputs.json", Linkname: "/etc/passwd"}, nil}
			return retar(t, ms, true)
		}, "symbolic link"},
		{"hard link", func() []byte {
			ms := clone()
			ms[inputs] = member{tar.Header{Typeflag: tar.TypeLink, Name: "inputs.json", Linkname: "s.aipk"}, nil}
			return retar(t, ms, true)
		}, "hard link"},
		{"device", func() []byte {
			ms := clone()
			ms[inputs] = member{tar.Header{Typeflag: tar.TypeChar, Name: "inputs.json", Devmajor: 1, Devminor: 3}, nil}
			return retar(t, ms, true)
		}, "device"},
		{"folder", func() []byte {
			ms := clone()
			ms = append(ms[:2], member{tar.Header{Typeflag: tar.TypeDir, Name: "inputs.json/", Mode: 0o755}, nil})
			return retar(t, ms, true)
		}, "folder"},
		{"duplicate", func() []byte { ms := clone(); ms = append(ms, ms[inputs]); return retar(t, ms, true) }, "twice"},
		{"huge member", func() []byte {
			ms := clone()
			ms[inputs].body = bytes.Repeat([]byte("x"), 1<<20)
			ms[inputs].hdr.Size = 1 << 20
			return retar(t, ms, true)
		}, "the manifest says"},
		{"wrong digest (inputs)", func() []byte { ms := clone(); ms[inputs].body[3] ^= 1; return retar(t, ms, true) }, "sha256 is"},
		{"wrong digest (store)", func() []byte { ms := clone(); ms[store].body[1000] ^= 1; return retar(t, ms, true) }, "checksum"},
		{"unlisted member", func() []byte {
			ms := clone()
			ms = append(ms, member{tar.Header{Typeflag: tar.TypeReg, Name: "extra", Size: 1, Mode: 0o444}, []byte("x")})
			return retar(t, ms, true)
		}, "not in the manifest"},
		{"missing member", func() []byte { return retar(t, clone()[:2], true) }, "without member"},
		{"no manifest first", func() []byte { ms := clone(); ms[0], ms[1] = ms[1], ms[0]; return retar(t, ms, true) }, "want the manifest"},
		{"garbled manifest", func() []byte {
			ms := clone()
			ms[0].body = []byte("{garbage")
			ms[0].hdr.Size = int64(len(ms[0].body))
			return retar(t, ms, true)
		}, "manifest"},
		{"huge manifest", func() []byte {
			ms := clone()
			ms[0].body = bytes.Repeat([]byte(" "), maxManifestSize+1)
			ms[0].hdr.Size = int64(len(ms[0].body))
			return retar(t, ms, true)
		}, "more than"},
		{"not zstd", func() []byte { return retar(t, clone(), false) }, "import"},
		{"empty", func() []byte { return nil }, "import"},
		{"truncated", func() []byte { return stream[:len(stream)*2/3] }, "import"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := testCache(t)
			_, _, err := c.Import(t.Context(), bytes.NewReader(tc.make()), ImportOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("import: %v, want a refusal mentioning %q", err, tc.want)
			}
			var ie *ImportError
			if !errors.As(err, &ie) && tc.name != "not zstd" {
				t.Errorf("error %v is not an ImportError", err)
			}
			nothingLeft(t, c)
		})
	}
}

// nothingLeft checks that a refused import left no entry, staging folder or
// stray file anywhere in the root.
func nothingLeft(t *testing.T, c *Cache) {
	t.Helper()
	if all, _ := c.List(); len(all) != 0 {
		t.Errorf("entries after a refused import: %+v", all)
	}
	if n := tmpNames(t, c); len(n) != 0 {
		t.Errorf("tmp/ holds %v", n)
	}
	filepath.Walk(c.Root(), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && !strings.Contains(p, "/locks/") {
			switch filepath.Base(p) {
			case "CACHEDIR.TAG", "README", "version":
			default:
				t.Errorf("stray file %s", p)
			}
		}
		return nil
	})
}

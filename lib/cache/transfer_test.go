package cache

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/store"
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

// damagedEntry populates a copy of a store and inputs.json and flips one
// byte of file name at off (negative: from the end).
func damagedEntry(t *testing.T, name string, off int) (*Cache, Key) {
	t.Helper()
	c, _ := testCache(t)
	dir := t.TempDir()
	writeStore(t, filepath.Join(dir, "s.aipk"), 30, 700, 11)
	writeFile(t, filepath.Join(dir, "inputs.json"), `{"data":["x"]}`)
	k := digestKey("damaged")
	e, _, err := c.Populate(k, []string{filepath.Join(dir, "s.aipk"), filepath.Join(dir, "inputs.json")}, PopulateOptions{AddOptions: AddOptions{Copy: true}})
	if err != nil {
		t.Fatal(err)
	}
	makeWritable(t, e.Dir)
	p := filepath.Join(e.Dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += len(b)
	}
	b[off] ^= 0xff
	replace(t, p, string(b))
	return c, k
}

// Export reads every byte: a damaged file is a *VerifyError, and the
// stream, cut inside that file's member, is refused by import.
func TestExportRefusesDamage(t *testing.T) {
	cases := []struct {
		name, file string
		off        int
	}{
		{"store body", "s.aipk", 5000},
		{"store header", "s.aipk", 20},
		{"store last body byte", "s.aipk", -41},
		{"store trailer checksum", "s.aipk", -20},
		{"store end marker", "s.aipk", -1},
		{"inputs first byte", "inputs.json", 0},
		{"inputs last byte", "inputs.json", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, k := damagedEntry(t, tc.file, tc.off)
			var buf bytes.Buffer
			err := c.Export(t.Context(), k, &buf)
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Key != k || !strings.Contains(err.Error(), tc.file) {
				t.Fatalf("export of a damaged entry: %v, want a VerifyError naming %s", err, tc.file)
			}
			dst, _ := testCache(t)
			if _, _, err := dst.Import(t.Context(), bytes.NewReader(buf.Bytes()), ImportOptions{}); err == nil {
				t.Fatal("import accepted the stream of a damaged entry")
			}
			nothingLeft(t, dst)
		})
	}
}

// The store checksum covers the bytes after the header up to the trailer,
// then the header: export computes it in that order as it streams, so the
// header size it assumes must be the store's.
func TestAipkHeaderSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.aipk")
	writeStore(t, p, 5, 100, 3)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	err = withStore(f, fi.Size(), false, func(r *store.Reader, b []byte) error {
		h := sha256.New()
		h.Write(b[aipkHeaderSize : len(b)-trailerLen])
		h.Write(b[:aipkHeaderSize])
		if got := [32]byte(h.Sum(nil)); got != r.Sum() {
			t.Errorf("body then %d-byte header hashes to %x, the trailer says %x", aipkHeaderSize, got, r.Sum())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A crafted stream labels a damaged store "sha256" with the digest of its
// damaged bytes: the manifest's own check passes, but import checks a store
// against its trailer whatever the manifest says, and so does verify.
func TestImportChecksStoresWhateverTheManifestSays(t *testing.T) {
	_, _, stream := exported(t)
	ms := untar(t, stream)
	ms[1].body[5000] ^= 0xff
	m, err := ParseManifest(ms[0].body)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(ms[1].body)
	m.Files[0].DigestKind, m.Files[0].Digest, m.Files[0].StoreVersion = DigestSHA256, hexString(sum[:]), 0
	ms[0].body = []byte(marshalRaw(t, m))
	ms[0].hdr.Size = int64(len(ms[0].body))
	c, _ := testCache(t)
	_, _, err = c.Import(t.Context(), bytes.NewReader(retar(t, ms, true)), ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "not a sound one") || !errors.Is(err, store.ErrChecksum) {
		t.Fatalf("import of a damaged store labelled sha256: %v, want a checksum refusal", err)
	}
	nothingLeft(t, c)

	// An entry like it already in a root (planted, or from an older
	// aiperf-cache) fails verify.
	dir := t.TempDir()
	bad := filepath.Join(dir, "s.aipk")
	os.WriteFile(bad, ms[1].body, 0o644)
	k := MustParseKey("planted")
	e := mustPopulate(t, c, k, filepath.Join(dir, "s.aipk")) // trailer digest, O(1): populate does not re-hash
	makeWritable(t, e.Dir)
	editManifest(t, e.Dir, func(m *Manifest) {
		m.Files[0].DigestKind, m.Files[0].Digest, m.Files[0].StoreVersion = DigestSHA256, hexString(sum[:]), 0
	})
	if _, err := c.Verify(k); err == nil || !errors.Is(err, store.ErrChecksum) {
		t.Fatalf("verify of a damaged store labelled sha256: %v", err)
	}
}

// zstdOf compresses b as one frame.
func zstdOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var zb bytes.Buffer
	zw, _ := zstd.NewWriter(&zb)
	zw.Write(b)
	zw.Close()
	return zb.Bytes()
}

// countingReader fails the test when more than max bytes are read from it.
type countingReader struct {
	t   *testing.T
	r   io.Reader
	n   int64
	max int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n += int64(n); c.n > c.max {
		c.t.Errorf("import read %d bytes, more than %d", c.n, c.max)
		return n, io.EOF
	}
	return n, err
}

// repeat yields b over and over, without end.
type repeat struct {
	b   []byte
	off int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.off:])
		n += c
		r.off = (r.off + c) % len(r.b)
	}
	return n, nil
}

// What follows the archive's end is read no further than a little zero
// padding (as tar writes to fill a record) and the frame's end: appended
// zeros that decode to gigabytes, an endless stream, or data are refused
// after a bounded read.
func TestImportStopsAtTheArchiveEnd(t *testing.T) {
	_, k, stream := exported(t)
	// A skippable zstd frame (magic 0x184D2A50, 16 bytes of nothing):
	// endless, these decode to nothing at all.
	skippable := append([]byte{0x50, 0x2a, 0x4d, 0x18, 16, 0, 0, 0}, make([]byte, 16)...)
	bytesOf := func(b []byte) func() io.Reader { return func() io.Reader { return bytes.NewReader(b) } }
	cases := []struct {
		name  string
		after func() io.Reader
		want  string // "" to accept
	}{
		{"tar record padding", bytesOf(zstdOf(t, make([]byte, 9*512))), ""},
		{"zeros decoding to 64 MiB", bytesOf(zstdOf(t, make([]byte, 64<<20))), "padding after the archive's end"},
		{"endless zeros", func() io.Reader { return &repeat{b: zstdOf(t, make([]byte, 64<<10))} }, "padding after the archive's end"},
		{"endless empty frames", func() io.Reader { return &repeat{b: skippable} }, "stream after the archive's end"},
		{"data", bytesOf(zstdOf(t, []byte("more"))), "data after the archive's end"},
		{"not zstd", bytesOf([]byte("trailing text")), "after the archive's end"},
	}
	for _, tc := range cases {
		for _, cached := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cached=%v", tc.name, cached), func(t *testing.T) {
				c, _ := testCache(t)
				if cached {
					if _, _, err := c.Import(t.Context(), bytes.NewReader(stream), ImportOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				in := &countingReader{t: t, r: io.MultiReader(bytes.NewReader(stream), tc.after()), max: int64(len(stream)) + 8<<20}
				_, _, err := c.Import(t.Context(), in, ImportOptions{})
				if tc.want == "" {
					if err != nil {
						t.Fatal(err)
					}
					if _, err := c.Verify(k); err != nil {
						t.Fatal(err)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("import: %v, want a refusal saying %q", err, tc.want)
				}
				if !cached {
					nothingLeft(t, c)
				}
			})
		}
	}
}

// stallReader yields b, then blocks until release is closed, having closed
// stalled.
type stallReader struct {
	b                []byte
	stalled, release chan struct{}
}

func (s *stallReader) Read(p []byte) (int, error) {
	if len(s.b) > 0 {
		n := copy(p, s.b)
		s.b = s.b[n:]
		return n, nil
	}
	close(s.stalled)
	<-s.release
	return 0, io.ErrUnexpectedEOF
}

// An import whose stream stalls (a pipe whose writer hangs) stops as soon as
// its context is done, at any point of the stream, leaving nothing behind.
func TestImportStopsWhenCancelled(t *testing.T) {
	_, _, stream := exported(t)
	for _, cut := range []int{0, 10, len(stream) / 2, len(stream)} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			c, _ := testCache(t)
			r := &stallReader{b: stream[:cut], stalled: make(chan struct{}), release: make(chan struct{})}
			defer close(r.release)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { _, _, err := c.Import(ctx, r, ImportOptions{}); done <- err }()
			<-r.stalled
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("import cancelled while the stream stalls: %v, want context.Canceled", err)
			}
			nothingLeft(t, c)
		})
	}
}

package cache

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/cachedir"
	"github.com/aiperf/toolkit/lib/store"
)

func TestOpenMakesLayout(t *testing.T) {
	c, _ := testCache(t)
	root := c.Root()
	fi, err := os.Stat(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Errorf("root mode %04o, want 0700", got)
	}
	for _, n := range []string{"CACHEDIR.TAG", "README", "version", "entries", "locks", "tmp", "quarantine"} {
		if _, err := os.Lstat(filepath.Join(root, n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	tag, _ := os.ReadFile(filepath.Join(root, "CACHEDIR.TAG"))
	if !bytes.HasPrefix(tag, []byte("Signature: 8a477f597d28d172789f06886806bc55")) {
		t.Errorf("CACHEDIR.TAG starts %q", tag)
	}
	v, _ := os.ReadFile(filepath.Join(root, "version"))
	if string(v) != "1\n" {
		t.Errorf("version file %q", v)
	}
	readme, _ := os.ReadFile(filepath.Join(root, "README"))
	if !bytes.Contains(readme, []byte("memo/")) {
		t.Error("README does not describe memo/")
	}
	reopen(t, c) // opening an existing root works
}

func TestOpenRefusesNewerLayout(t *testing.T) {
	c, _ := testCache(t)
	os.Chmod(filepath.Join(c.Root(), "version"), 0o644)
	writeFile(t, filepath.Join(c.Root(), "version"), "2\n")
	_, err := Open(c.Root(), Options{})
	if !errors.Is(err, ErrNewerLayout) || !strings.Contains(err.Error(), "newer aiperf-cache") {
		t.Fatalf("got %v, want ErrNewerLayout with advice", err)
	}
	writeFile(t, filepath.Join(c.Root(), "version"), "banana\n")
	if _, err := Open(c.Root(), Options{}); err == nil || !strings.Contains(err.Error(), "not a layout version") {
		t.Fatalf("garbage version: %v", err)
	}
}

func TestOpenReadsConfig(t *testing.T) {
	c, _ := testCache(t)
	writeFile(t, filepath.Join(c.Root(), "config"), "# caps\nmax-size = 2GiB\nmax-age=30d # a month\n")
	c2 := reopen(t, c)
	if got := c2.Config(); got.MaxSize != 2<<30 || got.MaxAge != 30*24*time.Hour {
		t.Fatalf("config %+v", got)
	}
	writeFile(t, filepath.Join(c.Root(), "config"), "max-size = 2GiB\nmax-sise = 1\n")
	_, err := Open(c.Root(), Options{})
	if err == nil || !strings.Contains(err.Error(), "config line 2") {
		t.Fatalf("bad config: %v", err)
	}
}

func TestOpenRefusesPlantedSubfolderLink(t *testing.T) {
	c, _ := testCache(t)
	elsewhere := t.TempDir()
	os.RemoveAll(filepath.Join(c.Root(), "entries"))
	if err := os.Symlink(elsewhere, filepath.Join(c.Root(), "entries")); err != nil {
		t.Fatal(err)
	}
	_, err := Open(c.Root(), Options{})
	if !errors.Is(err, errSymlink) {
		t.Fatalf("entries -> %s: %v, want a refusal", elsewhere, err)
	}
}

func TestSizeAndAge(t *testing.T) {
	sizes := map[string]int64{"4096": 4096, "1k": 1000, "1KiB": 1024, "1.5G": 1.5e9, "2GiB": 2 << 30, "3 MB": 3e6, "1Ti": 1 << 40}
	for s, want := range sizes {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "G", "1X", "-1", "1e30G"} {
		if _, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) accepted", s)
		}
	}
	ages := map[string]time.Duration{"30d": 720 * time.Hour, "12h": 12 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute}
	for s, want := range ages {
		if got, err := ParseAge(s); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "d", "x", "-3d", "3 days"} {
		if _, err := ParseAge(s); err == nil && s != "" {
			t.Errorf("ParseAge(%q) accepted", s)
		}
	}
	if got := FormatSize(1536 << 20); got != "1.5 GiB" {
		t.Errorf("FormatSize = %q", got)
	}
}

func TestLookupMissThenHit(t *testing.T) {
	c, _ := testCache(t)
	src := t.TempDir()
	st := filepath.Join(src, "store.aipk")
	writeStore(t, st, 50, 1000, 1)
	in := filepath.Join(src, "inputs.json")
	writeFile(t, in, `{"data":[]}`)
	k := digestKey("a")
	if _, err := c.Lookup(k); !errors.Is(err, ErrMiss) {
		t.Fatalf("empty cache: %v, want a miss", err)
	}
	e := mustPopulate(t, c, k, st, in)
	got, err := c.Lookup(k)
	if err != nil {
		t.Fatal(err)
	}
	if got.Path() != e.Path() || filepath.Base(got.Path()) != "store.aipk" {
		t.Errorf("lookup path %s, populate said %s", got.Path(), e.Path())
	}
	if want := filepath.Join(c.Root(), "entries", k.shard(), k.name(), "store.aipk"); got.Path() != want {
		t.Errorf("path %s, want %s", got.Path(), want)
	}
	m := got.Manifest
	if len(m.Files) != 2 || m.Files[0].DigestKind != DigestAipkTrailer || m.Files[1].DigestKind != DigestSHA256 || m.Tool != "cache-test" {
		t.Fatalf("manifest %+v", m)
	}
	r, err := store.Open(st, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum := r.Sum()
	r.Close()
	if m.Files[0].Digest != hexString(sum[:]) {
		t.Errorf("store digest %s, trailer %x", m.Files[0].Digest, sum)
	}
	if m.Files[1].Digest != "df6cd3ee7a2ec8b3e4faaf8d3fe36e2d3f6e4cbe8e27d2d0390ef5acfb9c5b5b" && len(m.Files[1].Digest) != 64 {
		t.Errorf("inputs digest %s", m.Files[1].Digest)
	}
	if _, err := c.Verify(k); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

func TestLookupRefreshesHourly(t *testing.T) {
	c, clk := testCache(t)
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, "x")
	k := MustParseKey("hourly")
	mustPopulate(t, c, k, p)
	created := clk.Now()
	clk.Advance(59 * time.Minute)
	e, err := c.Lookup(k)
	if err != nil {
		t.Fatal(err)
	}
	if !e.LastUsed.Equal(created) {
		t.Errorf("after 59m: last used %v, want %v (no refresh within the hour)", e.LastUsed, created)
	}
	clk.Advance(2 * time.Minute)
	if _, err := c.Lookup(k); err != nil {
		t.Fatal(err)
	}
	e, _ = c.Lookup(k)
	if !e.LastUsed.Equal(clk.Now()) {
		t.Errorf("after 61m: last used %v, want %v", e.LastUsed, clk.Now())
	}
}

func TestLookupMissesDamagedEntries(t *testing.T) {
	cases := []struct {
		name string
		harm func(t *testing.T, dir string)
		want string
	}{
		{"no manifest", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "manifest")) }, "no manifest"},
		{"garbled manifest", func(t *testing.T, d string) { replace(t, filepath.Join(d, "manifest"), "{\"v\":1,") }, "manifest"},
		{"newer manifest", func(t *testing.T, d string) { replace(t, filepath.Join(d, "manifest"), `{"v":9}`) }, "newer"},
		{"other key", func(t *testing.T, d string) { editManifest(t, d, func(m *Manifest) { m.Key = "other" }) }, "for key other"},
		{"truncated store", func(t *testing.T, d string) { os.Truncate(filepath.Join(d, "s.aipk"), 100) }, "bytes, the manifest says"},
		{"missing file", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "s.aipk")) }, "missing"},
		{"file is a link", func(t *testing.T, d string) {
			p := filepath.Join(d, "s.aipk")
			b, _ := os.ReadFile(p)
			other := filepath.Join(t.TempDir(), "same")
			os.WriteFile(other, b, 0o444)
			os.Remove(p)
			os.Symlink(other, p)
		}, "symbolic link"},
		{"manifest is a link", func(t *testing.T, d string) {
			p := filepath.Join(d, "manifest")
			b, _ := os.ReadFile(p)
			other := filepath.Join(t.TempDir(), "m")
			os.WriteFile(other, b, 0o444)
			os.Remove(p)
			os.Symlink(other, p)
		}, "symbolic link"},
		{"entry is a link", func(t *testing.T, d string) {
			moved := filepath.Join(t.TempDir(), "moved")
			os.Rename(d, moved)
			os.Symlink(moved, d)
		}, "symbolic link"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := testCache(t)
			src := filepath.Join(t.TempDir(), "s.aipk")
			writeStore(t, src, 10, 100, 2)
			k := digestKey(tc.name)
			// A copy: harming a linked entry would harm src too (the hazard
			// restore documents).
			e, _, err := c.Populate(k, []string{src}, PopulateOptions{AddOptions: AddOptions{Copy: true}})
			if err != nil {
				t.Fatal(err)
			}
			makeWritable(t, e.Dir)
			tc.harm(t, e.Dir)
			_, err = c.Lookup(k)
			var be *BadEntryError
			if !errors.Is(err, ErrMiss) || !errors.As(err, &be) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("lookup: %v, want a bad-entry miss mentioning %q", err, tc.want)
			}
			if _, err := c.Verify(k); err == nil {
				t.Fatal("verify passed")
			}
			// A damaged entry is replaced by the next populate.
			e2, stored, err := c.Populate(k, []string{src}, PopulateOptions{AddOptions: AddOptions{Copy: true}})
			if err != nil || !stored {
				t.Fatalf("populate over a damaged entry: %v stored=%v", err, stored)
			}
			if _, err := c.Verify(k); err != nil {
				t.Fatalf("after repopulate: %v (%s)", err, e2.Dir)
			}
		})
	}
}

func TestVerifyFindsFlippedBytes(t *testing.T) {
	for _, target := range []string{"s.aipk", "inputs.json"} {
		t.Run(target, func(t *testing.T) {
			c, _ := testCache(t)
			dir := t.TempDir()
			writeStore(t, filepath.Join(dir, "s.aipk"), 20, 500, 3)
			writeFile(t, filepath.Join(dir, "inputs.json"), `{"data":[1,2,3]}`)
			k := digestKey(target)
			e, _, err := c.Populate(k, []string{filepath.Join(dir, "s.aipk"), filepath.Join(dir, "inputs.json")}, PopulateOptions{AddOptions: AddOptions{Copy: true}})
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(e.Dir, target)
			os.Chmod(p, 0o644)
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 1
			os.WriteFile(p, b, 0o444)
			if _, err := c.Lookup(k); err != nil {
				t.Fatalf("lookup (sizes only) should still hit: %v", err)
			}
			_, err = c.Verify(k)
			var ve *VerifyError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), target) {
				t.Fatalf("verify: %v, want a VerifyError naming %s", err, target)
			}
		})
	}
}

func TestPopulateLinksAndMakesReadOnly(t *testing.T) {
	c, _ := testCache(t)
	src := filepath.Join(t.TempDir(), "s.aipk")
	writeStore(t, src, 5, 10, 4)
	e := mustPopulate(t, c, MustParseKey("linked"), src)
	if !sameInode(t, src, e.Path()) {
		t.Error("populate on one filesystem did not hard-link")
	}
	fi, _ := os.Stat(e.Path())
	if fi.Mode().Perm() != 0o444 {
		t.Errorf("stored file mode %04o, want 0444", fi.Mode().Perm())
	}
	if n := tmpNames(t, c); len(n) != 0 {
		t.Errorf("tmp/ holds %v after populate", n)
	}
}

func TestPopulateMoveAndCopy(t *testing.T) {
	c, _ := testCache(t)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.aipk")
	writeStore(t, a, 5, 10, 5)
	e := mustPopulate(t, c, MustParseKey("copy"), a) // link first, then copies below
	_ = e
	b := filepath.Join(dir, "b.aipk")
	writeStore(t, b, 5, 10, 6)
	e2, _, err := c.Populate(MustParseKey("copied"), []string{b}, PopulateOptions{AddOptions: AddOptions{Copy: true}})
	if err != nil {
		t.Fatal(err)
	}
	if sameInode(t, b, e2.Path()) || !sameBytes(t, b, e2.Path()) {
		t.Error("--copy did not make an equal, separate file")
	}
	m := filepath.Join(dir, "m.aipk")
	writeStore(t, m, 5, 10, 7)
	want, _ := os.ReadFile(m)
	e3, _, err := c.Populate(MustParseKey("moved"), []string{m}, PopulateOptions{AddOptions: AddOptions{Move: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--move left the source: %v", err)
	}
	if got, _ := os.ReadFile(e3.Path()); !bytes.Equal(got, want) {
		t.Error("moved file differs")
	}
}

func TestPopulatePlainCopy(t *testing.T) {
	c, _ := testCache(t, func(o *Options) { o.PlainCopy = true })
	src := filepath.Join(t.TempDir(), "s.aipk")
	writeStore(t, src, 100, 3000, 8)
	e, _, err := c.Populate(MustParseKey("plain"), []string{src}, PopulateOptions{AddOptions: AddOptions{Copy: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !sameBytes(t, src, e.Path()) {
		t.Fatal("plain copy differs")
	}
	if _, err := c.Verify(MustParseKey("plain")); err != nil {
		t.Fatal(err)
	}
	// restore --copy takes the same last-resort path.
	dest := filepath.Join(t.TempDir(), "back.aipk")
	r, err := c.Restore(MustParseKey("plain"), dest, RestoreOptions{Copy: true})
	if err != nil || r[0].Linked || !sameBytes(t, src, dest) {
		t.Fatalf("restore --copy with plain copies: %+v %v", r, err)
	}
}

func TestPopulateAcrossFilesystems(t *testing.T) {
	shm := "/dev/shm"
	if fi, err := os.Stat(shm); err != nil || !fi.IsDir() {
		t.Skip("no /dev/shm")
	}
	dir, err := os.MkdirTemp(shm, "cache-test-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(dir)
	c, _ := testCache(t)
	if devOf(t, dir) == devOf(t, c.Root()) {
		t.Skip("/dev/shm is on the cache's filesystem")
	}
	src := filepath.Join(dir, "x.aipk")
	writeStore(t, src, 50, 2000, 9)
	e := mustPopulate(t, c, MustParseKey("xdev"), src)
	if !sameBytes(t, src, e.Path()) {
		t.Fatal("cross-device copy differs")
	}
	r, err := c.Restore(MustParseKey("xdev"), filepath.Join(dir, "back.aipk"), RestoreOptions{})
	if err != nil || r[0].Linked {
		t.Fatalf("restore across filesystems: %+v %v, want a copy", r, err)
	}
	if !sameBytes(t, src, filepath.Join(dir, "back.aipk")) {
		t.Fatal("restored copy differs")
	}
}

func TestPopulateRefusesBrokenStore(t *testing.T) {
	c, _ := testCache(t)
	p := filepath.Join(t.TempDir(), "bad.aipk")
	writeFile(t, p, store.Magic+strings.Repeat("\x00", 300))
	_, _, err := c.Populate(MustParseKey("bad"), []string{p}, PopulateOptions{})
	if err == nil || !strings.Contains(err.Error(), "starts like a store") {
		t.Fatalf("got %v", err)
	}
	if _, err := c.Lookup(MustParseKey("bad")); !errors.Is(err, ErrMiss) {
		t.Fatalf("lookup after a failed populate: %v", err)
	}
	if n := tmpNames(t, c); len(n) != 0 {
		t.Errorf("tmp/ holds %v after a failed populate", n)
	}
	for _, bad := range [][]string{{}, {p, p}, {filepath.Join(t.TempDir(), "missing")}, {t.TempDir()}} {
		if _, _, err := c.Populate(MustParseKey("bad"), bad, PopulateOptions{}); err == nil {
			t.Errorf("populate %q succeeded", bad)
		}
	}
}

func TestPopulateFirstCompleteWins(t *testing.T) {
	c, _ := testCache(t)
	dir := t.TempDir()
	const n = 8
	var srcs []string
	for i := range n {
		p := filepath.Join(dir, string(rune('a'+i)), "s.aipk")
		os.Mkdir(filepath.Dir(p), 0o755)
		writeStore(t, p, 200, 500, uint64(100+i))
		srcs = append(srcs, p)
	}
	k := MustParseKey("race")
	var wg sync.WaitGroup
	stored := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ci, err := Open(c.Root(), c.opt)
			if err != nil {
				errs[i] = err
				return
			}
			defer ci.Close()
			_, stored[i], errs[i] = ci.Populate(k, []string{srcs[i]}, PopulateOptions{AddOptions: AddOptions{Copy: true}})
		}()
	}
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("populate %d: %v", i, errs[i])
		}
		if stored[i] {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d populates stored, want exactly 1", winners)
	}
	e, err := c.Verify(k)
	if err != nil {
		t.Fatal(err)
	}
	matches := 0
	for _, s := range srcs {
		if sameBytes(t, s, e.Path()) {
			matches++
		}
	}
	if matches != 1 {
		t.Fatalf("the entry matches %d sources, want 1", matches)
	}
	if names := tmpNames(t, c); len(names) != 0 {
		t.Errorf("tmp/ holds %v", names)
	}
}

func TestRestore(t *testing.T) {
	c, _ := testCache(t)
	dir := t.TempDir()
	st := filepath.Join(dir, "s.aipk")
	writeStore(t, st, 10, 100, 10)
	in := filepath.Join(dir, "inputs.json")
	writeFile(t, in, "{}")
	k := MustParseKey("restore")
	e := mustPopulate(t, c, k, st, in)

	out := t.TempDir()
	dest := filepath.Join(out, "run.aipk")
	writeFile(t, dest, "old contents")
	r, err := c.Restore(k, dest, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != 1 || !r[0].Linked || !sameInode(t, dest, e.Path()) {
		t.Fatalf("restore to a file: %+v, want the store linked", r)
	}
	r, err = c.Restore(k, filepath.Join(out, "copy.aipk"), RestoreOptions{Copy: true})
	if err != nil || r[0].Linked {
		t.Fatalf("restore --copy: %+v %v", r, err)
	}
	fi, _ := os.Stat(filepath.Join(out, "copy.aipk"))
	if sameInode(t, filepath.Join(out, "copy.aipk"), e.Path()) || fi.Mode().Perm()&0o200 == 0 || !sameBytes(t, st, filepath.Join(out, "copy.aipk")) {
		t.Errorf("--copy gave mode %v, want a separate writable copy", fi.Mode())
	}
	r, err = c.Restore(k, filepath.Join(out, "all")+"/", RestoreOptions{})
	if err != nil || len(r) != 2 {
		t.Fatalf("restore into a folder: %+v %v", r, err)
	}
	if !sameBytes(t, in, filepath.Join(out, "all", "inputs.json")) {
		t.Error("inputs.json not restored into the folder")
	}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary %s left behind", e.Name())
		}
	}
	if _, err := c.Restore(MustParseKey("absent"), dest, RestoreOptions{}); !errors.Is(err, ErrMiss) {
		t.Errorf("restore of a missing key: %v", err)
	}
}

func TestRemoveAndQuarantine(t *testing.T) {
	c, _ := testCache(t)
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, "data")
	k := MustParseKey("gone")
	mustPopulate(t, c, k, p)
	if err := c.Remove(k); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lookup(k); !errors.Is(err, ErrMiss) {
		t.Fatalf("after rm: %v", err)
	}
	if err := c.Remove(k); !errors.Is(err, ErrMiss) {
		t.Fatalf("rm twice: %v", err)
	}
	e := mustPopulate(t, c, k, p)
	makeWritable(t, e.Dir)
	os.Remove(filepath.Join(e.Dir, "manifest"))
	all, err := c.List()
	if err != nil || len(all) != 1 || all[0].Err == nil {
		t.Fatalf("list: %+v %v", all, err)
	}
	to, err := c.Quarantine(all[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(to, filepath.Join(c.Root(), "quarantine")) {
		t.Errorf("quarantined to %s", to)
	}
	if _, err := os.Stat(filepath.Join(to, "f")); err != nil {
		t.Errorf("quarantined entry lost its file: %v", err)
	}
	if all, _ := c.List(); len(all) != 0 {
		t.Errorf("list after quarantine: %+v", all)
	}
}

func TestSharedRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "team")
	c, err := Open(root, Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, "x")
	e, _, err := c.Populate(MustParseKey("team"), []string{p}, PopulateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Lock(t.Context(), MustParseKey("team"), LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	want := map[string]fs.FileMode{
		root:                               0o775 | fs.ModeSetgid,
		filepath.Join(root, "entries"):     0o775 | fs.ModeSetgid,
		filepath.Dir(e.Dir):                0o775 | fs.ModeSetgid,
		e.Dir:                              0o775 | fs.ModeSetgid,
		e.Path():                           0o444,
		filepath.Join(e.Dir, "manifest"):   0o444,
		filepath.Join(root, "locks", "74"): 0o775 | fs.ModeSetgid,
		filepath.Join(root, "locks", "74", "n-team"): 0o664,
	}
	for p, m := range want {
		fi, err := os.Stat(p)
		if err != nil {
			t.Error(err)
			continue
		}
		if got := fi.Mode() & (fs.ModePerm | fs.ModeSetgid); got != m {
			t.Errorf("%s: mode %v, want %v", p, got, m)
		}
		if fi.Mode().Perm()&0o002 != 0 {
			t.Errorf("%s is world-writable", p)
		}
	}
	if !c.Shared() || !reopen(t, c).Shared() {
		t.Error("the root does not stay shared")
	}
	// A private root refuses --shared; a world-writable one is refused.
	priv, _ := testCache(t)
	if _, err := Open(priv.Root(), Options{Shared: true}); err == nil {
		t.Error("--shared on a private root accepted")
	}
	os.Chmod(priv.Root(), 0o777)
	if _, err := Open(priv.Root(), Options{}); err == nil || !strings.Contains(err.Error(), "world-writable") {
		t.Errorf("world-writable root: %v", err)
	}
	_ = cachedir.Memo
}

package cache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/cachedir"
	"golang.org/x/sys/unix"
)

// otherUID is the user the owner tests give files to (nobody).
const otherUID = 65534

func asRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
}

// chownAll gives the folder dir and everything in it to uid:gid.
func chownAll(t *testing.T, dir string, uid, gid int) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An entry (its folder, manifest or a file) of another user is a miss,
// saying whose it is: in a private root nobody else can have put it there
// but root, and restoring it would hand out their bytes. The next populate
// replaces it.
func TestEntryOfAnotherUserIsAMiss(t *testing.T) {
	asRoot(t)
	for _, what := range []string{"folder", "manifest", "file"} {
		t.Run(what, func(t *testing.T) {
			c, _ := testCache(t)
			src := filepath.Join(t.TempDir(), "f")
			writeFile(t, src, "mine")
			k := MustParseKey("k")
			e, _, err := c.Populate(k, []string{src}, PopulateOptions{AddOptions: AddOptions{Copy: true}})
			if err != nil {
				t.Fatal(err)
			}
			p := map[string]string{"folder": e.Dir, "manifest": filepath.Join(e.Dir, "manifest"), "file": filepath.Join(e.Dir, "f")}[what]
			if err := os.Lchown(p, otherUID, otherUID); err != nil {
				t.Fatal(err)
			}
			_, err = c.Lookup(k)
			var be *BadEntryError
			if !errors.As(err, &be) || !errors.Is(err, cachedir.ErrNotOwner) {
				t.Fatalf("lookup of an entry whose %s is another user's: %v, want a bad entry (ErrNotOwner)", what, err)
			}
			if _, err := c.Restore(k, filepath.Join(t.TempDir(), "dest"), RestoreOptions{}); !errors.Is(err, ErrMiss) {
				t.Fatalf("restore: %v, want a miss", err)
			}
			if _, stored, err := c.Populate(k, []string{src}, PopulateOptions{AddOptions: AddOptions{Copy: true}}); err != nil || !stored {
				t.Fatalf("populate over it: %v %v", stored, err)
			}
			if _, err := c.Lookup(k); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// In a team root, an entry of another member is trusted when the caller
// says so (Options.Shared, the --shared flag) and the entry has the root's
// group, which is the caller's.
func TestTeamEntryTrustedWithShared(t *testing.T) {
	asRoot(t)
	c, _ := testCache(t, func(o *Options) { o.Shared = true })
	if !c.Shared() {
		t.Fatal("not a shared root")
	}
	src := filepath.Join(t.TempDir(), "f")
	writeFile(t, src, "team")
	k := MustParseKey("k")
	e := mustPopulate(t, c, k, src)
	chownAll(t, e.Dir, otherUID, c.gid)
	if _, err := c.Lookup(k); err != nil {
		t.Fatalf("a teammate's entry with --shared: %v", err)
	}
	plain := reopen(t, c)
	plain.opt.Shared, plain.trust = false, false
	if _, err := plain.Lookup(k); !errors.Is(err, cachedir.ErrNotOwner) {
		t.Fatalf("a teammate's entry without --shared: %v, want ErrNotOwner", err)
	}
	// Another group than the root's: not the team's.
	chownAll(t, e.Dir, otherUID, otherUID)
	if _, err := c.Lookup(k); !errors.Is(err, cachedir.ErrNotOwner) {
		t.Fatalf("an entry of another group: %v, want ErrNotOwner", err)
	}
}

// A restored link whose mtime cannot be set to now (another user's entry in
// a team root: utimensat needs the owner or write access) would keep the
// build's time, and make would rebuild everything after it on every run:
// restore copies it instead, with the time of the restore.
func TestRestoreCopiesWhatItCannotTouch(t *testing.T) {
	c, _ := testCache(t)
	src := filepath.Join(t.TempDir(), "f")
	writeFile(t, src, "built long ago")
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(src, old, old)
	e := mustPopulate(t, c, MustParseKey("k"), src)
	saved := touchNow
	touchNow = func(string) error { return unix.EPERM }
	defer func() { touchNow = saved }()
	dest := filepath.Join(t.TempDir(), "dest")
	r, err := c.Restore(MustParseKey("k"), dest, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r[0].Linked || sameInode(t, dest, e.Path()) || !sameBytes(t, dest, e.Path()) {
		t.Fatalf("restore: %+v, want a copy", r)
	}
	if fi, _ := os.Stat(dest); time.Since(fi.ModTime()) > time.Hour {
		t.Errorf("the copy has mtime %v, want the time of the restore", fi.ModTime())
	}
}

// Package digest computes the content digests that cache keys are built on.
//
// A file's digest is the SHA-256 of its bytes: the value sha256sum prints.
// A directory's digest is one SHA-256 over every regular file below it, in
// sorted relative-path order (component by component, each name by its
// bytes), each file contributing its relative path ('/'-separated, as the
// file system spells it, which is UTF-8 for any UTF-8 name), a NUL byte, its
// bytes and a NUL byte. That is the rule of the Python aiperf's cache
// (hash_dir_contents: sorted(root.rglob("*")), files only), and it gives the
// same digest for any tree without symlinks to directories or out of the
// tree; see [Hasher.Dir] for the symlink policy.
//
// Reads are large (4 MiB) and run one file ahead of the hashing on another
// goroutine, so a second core does the I/O while the first one hashes. A
// [Memo] remembers digests by the stat identity of a file (device, inode,
// size, mtime, ctime), so digesting an unchanged file again costs one stat.
package digest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/aiperf/toolkit/lib/internal/filekind"
)

// Sum is a SHA-256.
type Sum [32]byte

// String returns s as 64 lowercase hex digits, as sha256sum prints it.
func (s Sum) String() string { return hex.EncodeToString(s[:]) }

// ParseSum parses 64 hex digits, in either case.
func ParseSum(h string) (Sum, error) {
	var s Sum
	if len(h) != 2*len(s) {
		return s, fmt.Errorf("digest: %q is not 64 hex digits", h)
	}
	if _, err := hex.Decode(s[:], []byte(h)); err != nil {
		return s, fmt.Errorf("digest: %q is not 64 hex digits", h)
	}
	return s, nil
}

// Kind tells what a digest was computed over. A file and a directory can
// feed the same bytes to SHA-256 (a file holding "a\x00x\x00" and a directory
// holding a file a with the byte x), so whoever records a digest, such as a
// cache key, must record its kind too.
type Kind uint8

const (
	File   Kind = 1 + iota // the bytes of a regular file
	Dir                    // the directory rule (see the package comment)
	Stream                 // the bytes of a stream, such as standard input
	Listed                 // the directory rule over chosen files of a directory (see [Hasher.Listed])
)

func (k Kind) String() string {
	switch k {
	case File:
		return "file"
	case Dir:
		return "dir"
	case Stream:
		return "stream"
	case Listed:
		return "listed"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Digest is a sum with its kind.
type Digest struct {
	Kind Kind
	Sum  Sum
}

// String returns "KIND:sha256:HEX", such as "dir:sha256:e3b0…".
func (d Digest) String() string { return d.Kind.String() + ":sha256:" + d.Sum.String() }

// Default read sizes; see [Hasher].
const (
	DefaultChunkSize = 4 << 20
	DefaultBuffers   = 4
)

// Hasher computes digests. The zero value is ready to use and has no memo.
// A Hasher is safe for concurrent use; each call hashes on its own
// goroutines.
type Hasher struct {
	// Memo, when not nil, is consulted before reading a file or a directory
	// and learns the digests that were read. Call Memo.Flush to save them.
	Memo *Memo
	// Refresh reads every file even when the memo knows it (a verification,
	// such as `digest -c`, must look at the bytes); the memo still learns
	// what was read.
	Refresh bool
	// ChunkSize is the size of one read (default DefaultChunkSize), and
	// Buffers the number of chunks in flight between the reading goroutine
	// and the hashing one (default DefaultBuffers).
	ChunkSize int
	Buffers   int
	// OnDone, when not nil, is told how each digest of Path, File or Dir
	// was obtained (for a verbose mode). It may be called concurrently.
	OnDone func(Event)

	clock func() time.Time // tests: the time taken before a stat
}

// stamps are taken before the first stat of a digest: start for Event's
// Elapsed, now (h.clock in tests) for the memo's racy rule.
type stamps struct{ start, now time.Time }

func (h *Hasher) now() time.Time {
	if h.clock != nil {
		return h.clock()
	}
	return time.Now()
}

// Event tells how a digest was obtained.
type Event struct {
	Path    string
	Kind    Kind
	Memo    bool  // found in the memo: nothing was read
	Files   int   // files read
	Bytes   int64 // bytes read
	Elapsed time.Duration
}

func (h *Hasher) done(e Event, start time.Time) {
	if h.OnDone != nil {
		e.Elapsed = time.Since(start)
		h.OnDone(e)
	}
}

// Errors that name what is wrong with a path. They come wrapped in an
// *fs.PathError naming the path, so errors.Is works and the message reads
// "PATH: what".
var (
	ErrSpecial  = errors.New("not a regular file or directory")
	ErrOutside  = errors.New("symlink points outside the tree")
	ErrLoop     = errors.New("symlink loop")
	ErrDangling = errors.New("dangling symlink")
)

// Path digests a regular file or a directory; a symlink given as name is
// followed (like sha256sum does). Anything else, such as a FIFO or a device,
// is an error naming the path: opening a FIFO may block forever, and a
// device has no content to pin (read a pipe through [Hasher.Reader]).
func (h *Hasher) Path(ctx context.Context, name string) (Digest, error) {
	t := stamps{start: time.Now(), now: h.now()} // before the stat: see Memo about racy entries
	fi, err := os.Stat(name)
	if err != nil {
		return Digest{}, err
	}
	d := Digest{Kind: File}
	switch {
	case fi.Mode().IsRegular():
		d.Sum, err = h.file(ctx, name, fi, t)
	case fi.IsDir():
		d.Kind = Dir
		d.Sum, err = h.dir(ctx, name, t)
	default:
		err = &fs.PathError{Op: "digest", Path: name, Err: special(fi.Mode())}
	}
	if err != nil {
		return Digest{}, err
	}
	return d, nil
}

// File digests the regular file name (following a symlink).
func (h *Hasher) File(ctx context.Context, name string) (Sum, error) {
	d, err := h.Path(ctx, name)
	if err == nil && d.Kind != File {
		err = &fs.PathError{Op: "digest", Path: name, Err: errors.New("is a directory")}
	}
	return d.Sum, err
}

// Dir digests the directory tree at root by the directory rule (see the
// package comment). The policy for what the tree holds:
//
//   - regular files are hashed; directories are walked (an empty directory
//     adds nothing);
//   - a symlink whose target, fully resolved, lies inside the tree is
//     followed: to a file, that file's bytes are hashed under the link's
//     path; to a directory, that directory is walked under the link's path;
//   - a symlink that resolves outside the tree, that dangles, or that leads
//     back to a directory being walked (a loop) is an error naming it;
//   - FIFOs, sockets and devices are errors naming them.
//
// root itself may be a symlink; the tree is what it resolves to.
func (h *Hasher) Dir(ctx context.Context, root string) (Sum, error) {
	t := stamps{start: time.Now(), now: h.now()}
	fi, err := os.Stat(root)
	if err != nil {
		return Sum{}, err
	}
	if !fi.IsDir() {
		return Sum{}, &fs.PathError{Op: "digest", Path: root, Err: errors.New("not a directory")}
	}
	return h.dir(ctx, root, t)
}

// Reader digests the bytes of r (a Stream). The memo does not apply.
func (h *Hasher) Reader(ctx context.Context, r io.Reader) (Sum, error) {
	p := h.pipeline()
	return p.run(ctx, []source{{r: r, name: "-", disp: "-", size: -1}}, false)
}

func (h *Hasher) file(ctx context.Context, name string, fi fs.FileInfo, t stamps) (Sum, error) {
	id, idOK := statID(fi)
	if h.Memo != nil && idOK && !h.Refresh {
		if s, ok := h.Memo.lookupFile(name, id); ok {
			h.done(Event{Path: name, Kind: File, Memo: true}, t.start)
			return s, nil
		}
	}
	p := h.pipeline()
	src := source{name: name, disp: name, open: name, id: id, idOK: idOK, size: fi.Size()}
	s, err := p.run(ctx, []source{src}, false)
	if err != nil {
		return s, err
	}
	if h.Memo != nil && idOK && p.stable {
		h.Memo.addFile(name, id, s, t.now)
	}
	h.done(Event{Path: name, Kind: File, Files: 1, Bytes: p.bytes}, t.start)
	return s, nil
}

func (h *Hasher) dir(ctx context.Context, root string, t stamps) (Sum, error) {
	members, err := walk(root)
	if err != nil {
		return Sum{}, err
	}
	return h.members(ctx, root, members, t)
}

// Listed digests the files names (relative paths, '/'-separated, below root)
// by the directory rule, as if they were all the tree held: for a caller
// that knows which files of a directory a program reads, such as the trace
// files aiperf-tokenize takes from a directory. Each name is opened as
// root/name, following symlinks wherever they lead (the caller chose the
// files); each must be a regular file, and a name may appear once. The
// memo applies as for a directory.
func (h *Hasher) Listed(ctx context.Context, root string, names []string) (Sum, error) {
	t := stamps{start: time.Now(), now: h.now()}
	members := make([]source, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		if seen[n] || n == "" || filepath.IsAbs(n) || !filepath.IsLocal(filepath.FromSlash(n)) {
			return Sum{}, &fs.PathError{Op: "digest", Path: p, Err: errors.New("not a distinct relative path inside the directory")}
		}
		seen[n] = true
		fi, err := os.Stat(p)
		if err != nil {
			return Sum{}, err
		}
		if !fi.Mode().IsRegular() {
			return Sum{}, &fs.PathError{Op: "digest", Path: p, Err: special(fi.Mode())}
		}
		id, ok := statID(fi)
		members = append(members, source{name: n, open: p, disp: p, id: id, idOK: ok, size: fi.Size()})
	}
	sort.Slice(members, func(i, j int) bool { return pathLess(members[i].name, members[j].name) })
	return h.members(ctx, root, members, t)
}

// members digests the members of a tree (sorted by pathLess).
func (h *Hasher) members(ctx context.Context, root string, members []source, t stamps) (Sum, error) {
	var fp Sum
	memo := h.Memo != nil && allIDs(members)
	if memo {
		fp = fingerprint(members)
		if !h.Refresh {
			if s, ok := h.Memo.lookupDir(fp, members); ok {
				h.done(Event{Path: root, Kind: Dir, Memo: true}, t.start)
				return s, nil
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return Sum{}, err
	}
	p := h.pipeline()
	s, err := p.run(ctx, members, true)
	if err != nil {
		return s, err
	}
	if memo && p.stable {
		h.Memo.addDir(fp, members, s, t.now)
	}
	h.done(Event{Path: root, Kind: Dir, Files: len(members), Bytes: p.bytes}, t.start)
	return s, nil
}

func (h *Hasher) pipeline() *pipeline {
	p := &pipeline{chunk: h.ChunkSize, bufs: h.Buffers}
	if p.chunk <= 0 {
		p.chunk = DefaultChunkSize
	}
	if p.bufs < 2 {
		p.bufs = DefaultBuffers
	}
	return p
}

func special(m fs.FileMode) error {
	return fmt.Errorf("%w: it is %s", ErrSpecial, filekind.Of(m))
}

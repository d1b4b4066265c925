package cache

import (
	"archive/tar"
	"bufio"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"
)

// The transfer stream of an entry (export / import) is a zstd-compressed
// tar archive whose first member is the entry's manifest, named "manifest",
// followed by one regular-file member per file of the entry, named as in
// the manifest. Import accepts nothing else: no folders, links or devices,
// no path with a slash, no member the manifest does not list or lists at
// another size, no member twice; and every file's digest is recomputed
// before the entry is published. The members carry mode 0444, owner 0 and
// the entry's creation time, so an export is a pure function of the entry.

// maxWindow bounds the zstd window import accepts (memory per stream).
// zstd -19 uses 8 MiB and --long 128 MiB.
const maxWindow = 128 << 20

// Export writes k's entry as a transfer stream to w.
func (c *Cache) Export(k Key, w io.Writer) error {
	h, err := c.find(k)
	if err != nil {
		return err
	}
	defer h.close()
	e := h.e
	if now := c.now(); now.Sub(e.LastUsed) > refreshAfter {
		h.sh.touch(k.name(), now)
	}
	mb, err := readSmall(h.ed, manifestName, maxManifestSize)
	if err != nil {
		return err
	}
	// SpeedDefault (about zstd -3): on store files it costs the CPU of
	// SpeedFastest and of zstd -1, and its output is 12% smaller than
	// SpeedFastest's (5% smaller than zstd -1's) and decodes faster.
	// Measured on 256 MiB of a packed store: 1.41 s CPU, 21.2% of the input.
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	if err != nil {
		return err
	}
	defer zw.Close()
	tw := tar.NewWriter(zw)
	mtime := time.Unix(0, e.Manifest.CreatedUnixNS)
	hdr := func(name string, size int64) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o444, ModTime: mtime, Format: tar.FormatPAX}
	}
	if err := tw.WriteHeader(hdr(manifestName, int64(len(mb)))); err != nil {
		return err
	}
	if _, err := tw.Write(mb); err != nil {
		return err
	}
	for _, f := range e.Manifest.Files {
		src, err := h.ed.open(f.Name, unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(hdr(f.Name, f.Size)); err != nil {
			src.Close()
			return err
		}
		n, err := io.Copy(tw, io.LimitReader(src, f.Size))
		src.Close()
		if err != nil {
			return fmt.Errorf("export %s: %w", f.Name, err)
		}
		if n != f.Size {
			return fmt.Errorf("export %s: read %d bytes, the manifest says %d", f.Name, n, f.Size)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// ImportOptions configures Import.
type ImportOptions struct {
	// MaxSize refuses an entry larger than this many bytes (0: the root's
	// size cap, if its config has one; otherwise only the free space).
	MaxSize int64
}

// ImportError is an import stream refused for its content.
type ImportError struct{ Err error }

func (e *ImportError) Error() string { return "import: " + e.Err.Error() }
func (e *ImportError) Unwrap() error { return e.Err }

func refuse(format string, args ...any) error {
	return &ImportError{Err: fmt.Errorf(format, args...)}
}

// Import reads a transfer stream from r and publishes the entry it holds.
// Nothing is published, and nothing is left behind, unless every member
// checks out. stored is false when the cache already had the entry (the
// rest of the stream is then read and dropped).
func (c *Cache) Import(r io.Reader, opt ImportOptions) (e *Entry, stored bool, err error) {
	// One decoder, no async blocks: decoding is a small part of an import
	// (hashing and writing are the rest), and async decoding costs 40% more
	// CPU, which on a busy node the exporter or the hashing would rather have.
	// The decoder reads block headers a few bytes at a time: buffer them.
	zr, err := zstd.NewReader(bufio.NewReaderSize(r, 1<<20), zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, false, err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	hdr, err := tr.Next()
	if err == io.EOF {
		return nil, false, refuse("empty stream (no manifest)")
	}
	if err != nil {
		return nil, false, refuse("not an aiperf-cache stream: %w", err)
	}
	if hdr.Name != manifestName || !regularMember(hdr) {
		return nil, false, refuse("first member is %q (%s), want the manifest", clip(hdr.Name), memberType(hdr))
	}
	if hdr.Size > maxManifestSize {
		return nil, false, refuse("manifest member is %d bytes, more than %d", hdr.Size, maxManifestSize)
	}
	mb, err := io.ReadAll(tr)
	if err != nil {
		return nil, false, refuse("manifest: %w", err)
	}
	m, err := ParseManifest(mb)
	if err != nil {
		return nil, false, refuse("%w", err)
	}
	k := MustParseKey(m.Key)
	max := opt.MaxSize
	if max <= 0 {
		max = c.cfg.MaxSize
	}
	if total := m.Size(); max > 0 && total > max {
		return nil, false, refuse("entry %s is %s, more than the %s allowed", k, FormatSize(total), FormatSize(max))
	}
	var fs unix.Statfs_t
	if unix.Fstatfs(c.tmp.fd, &fs) == nil {
		if free := int64(fs.Bavail) * int64(fs.Bsize); free >= 0 && m.Size() > free {
			return nil, false, refuse("entry %s is %s; %s has %s free", k, FormatSize(m.Size()), c.root, FormatSize(free))
		}
	}
	if e, err := c.Lookup(k); err == nil {
		if _, err := io.Copy(io.Discard, zr); err != nil {
			return e, false, refuse("%w", err)
		}
		return e, false, nil
	}

	s, err := c.Stage()
	if err != nil {
		return nil, false, err
	}
	defer s.Abort()
	seen := make(map[string]bool, len(m.Files))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, refuse("%w", err)
		}
		name := hdr.Name
		if !regularMember(hdr) {
			return nil, false, refuse("member %q is %s; only regular files are accepted", clip(name), memberType(hdr))
		}
		if err := validFileName(name); err != nil {
			return nil, false, refuse("member %q: not a plain name inside the entry: %w", clip(name), err)
		}
		want, ok := m.file(name)
		if !ok {
			return nil, false, refuse("member %q is not in the manifest", clip(name))
		}
		if seen[name] {
			return nil, false, refuse("member %q appears twice", name)
		}
		seen[name] = true
		if hdr.Size != want.Size {
			return nil, false, refuse("member %q is %d bytes, the manifest says %d", name, hdr.Size, want.Size)
		}
		if err := s.receive(name, tr, want); err != nil {
			return nil, false, err
		}
	}
	for _, f := range m.Files {
		if !seen[f.Name] {
			return nil, false, refuse("stream ends without member %q", f.Name)
		}
	}
	// Read the stream to its end (the rest of the zstd frame), so that the
	// writer of a pipe never sees it closed early.
	io.Copy(io.Discard, zr)
	s.files = m.Files
	return s.publish(k, m)
}

// receive writes one member into the staging folder and checks it against
// the manifest's entry for it.
func (s *Staging) receive(name string, r io.Reader, want File) error {
	f, err := s.d.create(name, s.c.fileMode(true))
	if err != nil {
		return err
	}
	defer f.Close()
	// 1 MiB writes (the wrapper hides os.File's ReadFrom, which would copy
	// through a 32 KiB buffer).
	n, err := io.CopyBuffer(struct{ io.Writer }{f}, io.LimitReader(r, want.Size), make([]byte, 1<<20))
	if err != nil {
		return refuse("member %q: %w", name, err)
	}
	if n != want.Size {
		return refuse("member %q: stream ends after %d of %d bytes", name, n, want.Size)
	}
	if err := verifyFile(f, want); err != nil {
		return refuse("member %w", err)
	}
	if err := f.Chmod(s.c.fileMode(false)); err != nil {
		return err
	}
	return datasync(f)
}

// regularMember: archive/tar's reader already reports the old '\x00' flag
// (TypeRegA) as TypeReg, or as TypeDir for a name ending in a slash.
func regularMember(h *tar.Header) bool {
	return h.Typeflag == tar.TypeReg
}

func memberType(h *tar.Header) string {
	switch h.Typeflag {
	case tar.TypeReg:
		return "a regular file"
	case tar.TypeSymlink:
		return "a symbolic link"
	case tar.TypeLink:
		return "a hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "a device file"
	case tar.TypeDir:
		return "a folder"
	case tar.TypeFifo:
		return "a named pipe"
	}
	return fmt.Sprintf("of tar type %q", h.Typeflag)
}

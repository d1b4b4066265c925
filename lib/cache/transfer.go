package cache

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/aiperf/toolkit/lib/store"
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

// Export writes k's entry as a transfer stream to w. It reads every byte
// of the entry and checks each file against the manifest as it streams it
// (a store also against its own trailer). A file that does not match (a
// damaged entry) is a *VerifyError, and the stream is then cut short inside
// that file's member: its last bytes and the archive's end are never
// written, so no import can accept what was sent. The same goes for any
// other failure, and for ctx being done.
func (c *Cache) Export(ctx context.Context, k Key, w io.Writer) (err error) {
	h, err := c.use(k)
	if err != nil {
		return err
	}
	defer h.close()
	e := h.e
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
	defer func() {
		if err != nil {
			// Drop what the encoder still holds, and never write the
			// frame's end: the stream stays cut where it is.
			zw.Reset(io.Discard)
		}
		zw.Close()
	}()
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
			return &VerifyError{Key: k, Err: err}
		}
		if err := tw.WriteHeader(hdr(f.Name, f.Size)); err != nil {
			src.Close()
			return err
		}
		err = exportFile(ctx, tw, src, f)
		src.Close()
		var ve *VerifyError
		if errors.As(err, &ve) {
			ve.Key = k
		}
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// exportChunk is how much of a file export writes between two looks at its
// context.
const exportChunk = 1 << 20

// aipkHeaderSize is the size of a version-1 store's header: the store
// checksum covers the bytes after it up to the trailer, then the header
// (lib/store/format.go). Export hashes in that order as it streams; should
// the layout ever differ, a mismatch is confirmed by the store's own Verify
// before the entry is called damaged, so this constant can cost a second
// read but never a false alarm.
const aipkHeaderSize = 160

// exportFile writes the want.Size bytes of f to w and checks them against
// want as they pass, holding the last bytes back until the check is done:
// on a mismatch the member stays incomplete. The error is a *VerifyError
// when the file does not match.
func exportFile(ctx context.Context, w io.Writer, f *os.File, want File) error {
	damaged := func(format string, args ...any) error {
		return &VerifyError{Err: fmt.Errorf("%s: "+format, append([]any{want.Name}, args...)...)}
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != want.Size {
		return damaged("%d bytes, the manifest says %d", fi.Size(), want.Size)
	}
	var putErr error // a failure to write, not a fault of the file
	put := func(b []byte, h hash.Hash) error {
		for len(b) > 0 {
			if err := ctx.Err(); err != nil {
				putErr = err
				return err
			}
			n := min(len(b), exportChunk)
			if h != nil {
				h.Write(b[:n])
			}
			if _, err := w.Write(b[:n]); err != nil {
				putErr = err
				return err
			}
			b = b[n:]
		}
		return nil
	}
	switch want.DigestKind {
	case DigestAipkTrailer:
		err := withStore(f, want.Size, false, func(r *store.Reader, b []byte) error {
			sum := r.Sum()
			if got := hex.EncodeToString(sum[:]); got != want.Digest {
				return damaged("store checksum in the trailer is %s, the manifest says %s", got, want.Digest)
			}
			if r.Version() != want.StoreVersion {
				return damaged("store format version %d, the manifest says %d", r.Version(), want.StoreVersion)
			}
			hs, end := aipkHeaderSize, len(b)-trailerLen
			if hs > end {
				return damaged("%d bytes, too short for a store", len(b))
			}
			if err := put(b[:hs], nil); err != nil {
				return err
			}
			h := sha256.New()
			if err := put(b[hs:end], h); err != nil {
				return err
			}
			h.Write(b[:hs])
			if [32]byte(h.Sum(nil)) != sum {
				if err := r.Verify(); err != nil {
					return damaged("%w", err)
				}
			}
			return put(b[end:], nil)
		})
		if err != nil && putErr == nil && !errors.As(err, new(*VerifyError)) {
			// Not a store any more (lib/store's checks), or a fault
			// reading it.
			return damaged("%w", err)
		}
		return err
	case DigestSHA256:
		// Everything but the last byte, hashed as it goes; then the last
		// byte once the digest is known to match.
		h := sha256.New()
		buf := make([]byte, exportChunk)
		hold := min(want.Size, 1)
		rest := io.NewSectionReader(f, 0, want.Size-hold)
		for {
			n, err := rest.Read(buf)
			if n > 0 {
				if err := put(buf[:n], h); err != nil {
					return err
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("export %s: %w", want.Name, err)
			}
		}
		last := make([]byte, hold)
		if _, err := f.ReadAt(last, want.Size-hold); err != nil && !(err == io.EOF && hold == 0) {
			return fmt.Errorf("export %s: %w", want.Name, err)
		}
		h.Write(last)
		if got := hex.EncodeToString(h.Sum(nil)); got != want.Digest {
			return damaged("sha256 is %s, the manifest says %s", got, want.Digest)
		}
		if hasStoreMagic(f) {
			// What populate would have refused must not leave either.
			if err := withStore(f, want.Size, true, func(r *store.Reader, _ []byte) error { return r.Verify() }); err != nil {
				return damaged("starts like a store but is not a sound one: %w", err)
			}
		}
		return put(last, nil)
	}
	return damaged("unknown digest kind %q", want.DigestKind)
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

// Bounds on what may follow the archive's end in an import stream: tar
// pads an archive to its record size (10 KiB by default, more with a larger
// blocking factor), so a little zero padding is accepted; and then the end
// of the zstd frame, a few bytes. Anything beyond is refused rather than
// decoded to its end, which for a hostile stream could be never (640 KiB of
// zstd decode to 20 GiB of zeros).
const (
	maxTrailing    = 1 << 20 // decoded bytes after the archive's end, all zero
	maxTrailingRaw = 2 << 20 // stream bytes read after it
)

// Import reads a transfer stream from r and publishes the entry it holds.
// Nothing is published, and nothing is left behind, unless every member
// checks out; a store is checked against its own trailer too, whatever the
// manifest says of it. stored is false when the cache already had the
// entry (the members are then read, checked against the manifest and
// dropped). The stream is read up to the archive's end and the end of its
// zstd frame, and no further than a little padding past it. When ctx is
// done, Import returns its error at once, even while r is stalled.
func (c *Cache) Import(ctx context.Context, r io.Reader, opt ImportOptions) (e *Entry, stored bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = ctx.Err()
		}
	}()
	raw := newCancelReader(ctx, r)
	// One decoder, no async blocks: decoding is a small part of an import
	// (hashing and writing are the rest), and async decoding costs 40% more
	// CPU, which on a busy node the exporter or the hashing would rather have.
	// The decoder reads block headers a few bytes at a time: buffer them.
	zr, err := zstd.NewReader(bufio.NewReaderSize(raw, 1<<20), zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, false, err
	}
	defer zr.Close()
	tr := tar.NewReader(ctxReader{ctx, zr})
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
		// Already here: read the members through (the writer of a pipe
		// must not see it closed early), checking only their shape.
		drop := func(name string, r io.Reader, want File) error {
			if _, err := io.Copy(io.Discard, r); err != nil {
				return refuse("member %q: %w", name, err)
			}
			return nil
		}
		if err := members(tr, m, drop); err != nil {
			return e, false, err
		}
		if err := finish(zr, raw); err != nil {
			return e, false, err
		}
		return e, false, nil
	}

	s, err := c.Stage()
	if err != nil {
		return nil, false, err
	}
	defer s.Abort()
	if err := members(tr, m, s.receive); err != nil {
		return nil, false, err
	}
	if err := finish(zr, raw); err != nil {
		return nil, false, err
	}
	s.files = m.Files
	if err := s.relabel(); err != nil {
		return nil, false, err
	}
	m.Files = s.files
	return s.publish(k, m)
}

// members reads the file members of a stream whose manifest m was read,
// checks each against m (a regular file, a plain name that m lists, at the
// size m gives, once) and hands it to sink, until the archive's end, which
// must come after every file m lists.
func members(tr *tar.Reader, m *Manifest, sink func(name string, r io.Reader, want File) error) error {
	seen := make(map[string]bool, len(m.Files))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return refuse("%w", err)
		}
		name := hdr.Name
		if !regularMember(hdr) {
			return refuse("member %q is %s; only regular files are accepted", clip(name), memberType(hdr))
		}
		if err := validFileName(name); err != nil {
			return refuse("member %q: not a plain name inside the entry: %w", clip(name), err)
		}
		want, ok := m.file(name)
		if !ok {
			return refuse("member %q is not in the manifest", clip(name))
		}
		if seen[name] {
			return refuse("member %q appears twice", name)
		}
		seen[name] = true
		if hdr.Size != want.Size {
			return refuse("member %q is %d bytes, the manifest says %d", name, hdr.Size, want.Size)
		}
		if err := sink(name, tr, want); err != nil {
			return err
		}
	}
	for _, f := range m.Files {
		if !seen[f.Name] {
			return refuse("stream ends without member %q", f.Name)
		}
	}
	return nil
}

// finish reads what follows the archive's end: zero padding, at most
// maxTrailing bytes of it, then the end of the zstd frame (whose checksum
// the decoder checks), within maxTrailingRaw bytes of the stream.
func finish(zr *zstd.Decoder, raw *cancelReader) error {
	raw.limitFromHere(maxTrailingRaw)
	buf := make([]byte, 32<<10)
	var n int64
	for {
		m, err := zr.Read(buf)
		for _, b := range buf[:m] {
			if b != 0 {
				return refuse("data after the archive's end")
			}
		}
		if n += int64(m); n > maxTrailing {
			return refuse("more than %s of padding after the archive's end", FormatSize(maxTrailing))
		}
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, errTrailing) || raw.overLimit() {
			return refuse("more than %s of stream after the archive's end", FormatSize(maxTrailingRaw))
		}
		if err != nil {
			return refuse("after the archive's end: %w", err)
		}
	}
}

var errTrailing = errors.New("too much data after the archive's end")

// ctxReader fails its reads once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// cancelReader reads r on a goroutine of its own, a chunk ahead, so that a
// Read waiting on a stalled r (a pipe whose writer neither writes nor
// closes) returns ctx's error as soon as ctx is done; the goroutine stays
// blocked in r until r returns or the process ends. It also counts what it
// hands out and can refuse to hand out more (limitFromHere).
type cancelReader struct {
	ctx   context.Context
	in    chan chunk
	free  chan []byte
	cur   chunk
	off   int
	n     int64 // bytes handed out
	limit int64 // when > 0, no more than this many bytes are handed out
}

type chunk struct {
	b   []byte
	err error
}

const cancelChunk = 256 << 10

func newCancelReader(ctx context.Context, r io.Reader) *cancelReader {
	c := &cancelReader{ctx: ctx, in: make(chan chunk, 1), free: make(chan []byte, 2)}
	c.free <- make([]byte, cancelChunk)
	c.free <- make([]byte, cancelChunk)
	go func() {
		for {
			var buf []byte
			select {
			case buf = <-c.free:
			case <-ctx.Done():
				return
			}
			n, err := r.Read(buf)
			select {
			case c.in <- chunk{buf[:n], err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

// overLimit reports whether the limit stopped a read.
func (c *cancelReader) overLimit() bool { return c.limit > 0 && c.n >= c.limit }

// limitFromHere lets at most n more bytes through.
func (c *cancelReader) limitFromHere(n int64) { c.limit = c.n + n }

func (c *cancelReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if c.limit > 0 && c.n >= c.limit {
		return 0, errTrailing
	}
	for c.off == len(c.cur.b) {
		if c.cur.err != nil {
			return 0, c.cur.err
		}
		if c.cur.b != nil {
			c.free <- c.cur.b[:cap(c.cur.b)]
		}
		select {
		case c.cur = <-c.in:
			c.off = 0
		case <-c.ctx.Done():
			return 0, c.ctx.Err()
		}
	}
	if c.limit > 0 {
		p = p[:min(int64(len(p)), c.limit-c.n)]
	}
	n := copy(p, c.cur.b[c.off:])
	c.off += n
	c.n += int64(n)
	return n, nil
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

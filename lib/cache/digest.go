package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"

	"github.com/aiperf/toolkit/lib/store"
	"golang.org/x/sys/unix"
)

// digest describes f (size bytes, named name in the entry) for a manifest.
// A file that starts with the store magic must be a store that passes
// lib/store's structural checks, and gets the checksum its trailer holds:
// O(1) in its size. Any other file is hashed.
func digest(f *os.File, name string, size int64) (File, error) {
	out := File{Name: name, Size: size}
	var magic [len(store.Magic)]byte
	n, err := f.ReadAt(magic[:], 0)
	if err != nil && err != io.EOF {
		return out, err
	}
	if n == len(magic) && string(magic[:]) == store.Magic {
		var sum [32]byte
		err := withStore(f, size, false, func(r *store.Reader, _ []byte) error {
			sum, out.StoreVersion = r.Sum(), r.Version()
			if m := r.Metadata(); label(m.Model) && label(m.Endpoint) {
				out.Model, out.Endpoint = m.Model, m.Endpoint
			}
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("%s starts like a store but is not one: %w", name, err)
		}
		out.DigestKind, out.Digest = DigestAipkTrailer, hex.EncodeToString(sum[:])
		return out, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
		return out, err
	}
	out.DigestKind, out.Digest = DigestSHA256, hex.EncodeToString(h.Sum(nil))
	return out, nil
}

// verifyFile recomputes the digest of f over every byte and compares it,
// and its size, with want.
func verifyFile(f *os.File, want File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != want.Size {
		return fmt.Errorf("%s is %d bytes, the manifest says %d", want.Name, fi.Size(), want.Size)
	}
	switch want.DigestKind {
	case DigestSHA256:
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, want.Size)); err != nil {
			return fmt.Errorf("%s: %w", want.Name, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want.Digest {
			return fmt.Errorf("%s: sha256 is %s, the manifest says %s", want.Name, got, want.Digest)
		}
		// A file that starts like a store is checked as one, whatever the
		// manifest calls it: populate refuses a file that starts like a
		// store and is not a sound one, so no entry may hold one (a crafted
		// import stream labels a damaged store "sha256" with the digest of
		// its damaged bytes).
		if hasStoreMagic(f) {
			if err := withStore(f, want.Size, true, func(r *store.Reader, _ []byte) error { return r.Verify() }); err != nil {
				return fmt.Errorf("%s: starts like a store but is not a sound one: %w", want.Name, err)
			}
		}
		return nil
	case DigestAipkTrailer:
		// Prefault: the checksum reads every page, and one madvise maps them
		// all far faster than a page fault each (1 GiB: 1.1 s -> 0.7 s here).
		return withStore(f, want.Size, true, func(r *store.Reader, _ []byte) error {
			if err := r.Verify(); err != nil {
				return fmt.Errorf("%s: %w", want.Name, err)
			}
			sum := r.Sum()
			if got := hex.EncodeToString(sum[:]); got != want.Digest {
				return fmt.Errorf("%s: store checksum is %s, the manifest says %s", want.Name, got, want.Digest)
			}
			if r.Version() != want.StoreVersion {
				return fmt.Errorf("%s: store format version %d, the manifest says %d", want.Name, r.Version(), want.StoreVersion)
			}
			return nil
		})
	}
	return fmt.Errorf("%s: unknown digest kind %q", want.Name, want.DigestKind)
}

// trailerLen is the size of a store's trailer: its checksum and the magic.
const trailerLen = 32 + len(store.Magic)

// hasStoreMagic reports whether f starts like a store.
func hasStoreMagic(f *os.File) bool {
	var magic [len(store.Magic)]byte
	n, _ := f.ReadAt(magic[:], 0)
	return n == len(magic) && string(magic[:]) == store.Magic
}

// withStore maps f read-only (every page at once with prefault), opens it
// with lib/store's checks and calls fn with the store and the mapping. A
// fault while reading the mapping (the file shrank underneath) is an error,
// not a crash.
func withStore(f *os.File, size int64, prefault bool, fn func(*store.Reader, []byte) error) (err error) {
	if size <= 0 || size > math.MaxInt {
		return fmt.Errorf("%w: %d bytes", store.ErrFormat, size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap %s: %w", f.Name(), err)
	}
	defer unix.Munmap(b)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: read fault (file truncated while read?): %v", f.Name(), r)
		}
	}()
	if prefault {
		if err := store.Prefault(b); err != nil {
			return err
		}
	}
	r, err := store.OpenBytes(b)
	if err != nil {
		return err
	}
	return fn(r, b)
}

// VerifyError reports an entry whose files do not match its manifest.
type VerifyError struct {
	Key Key
	Err error
}

func (e *VerifyError) Error() string { return fmt.Sprintf("entry %s: %v", e.Key, e.Err) }
func (e *VerifyError) Unwrap() error { return e.Err }

// Verify checks k's entry as Lookup does and then recomputes every file's
// digest. It returns ErrMiss for an absent key, a *BadEntryError for an
// entry Lookup rejects and a *VerifyError for a file whose bytes do not
// match. It does not refresh the entry's last-use time.
func (c *Cache) Verify(k Key) (*Entry, error) {
	h, err := c.find(k)
	if err != nil {
		return nil, err
	}
	defer h.close()
	if err := verifyEntry(h.ed, h.e.Manifest); err != nil {
		return h.e, &VerifyError{Key: k, Err: err}
	}
	return h.e, nil
}

func verifyEntry(ed *dir, m *Manifest) error {
	var errs []error
	for _, want := range m.Files {
		f, err := ed.open(want.Name, unix.O_RDONLY, 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := verifyFile(f, want); err != nil {
			errs = append(errs, err)
		}
		f.Close()
	}
	return errors.Join(errs...)
}

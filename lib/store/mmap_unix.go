//go:build unix

package store

import (
	"fmt"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f read-only and shared: every reader
// of the file on the machine shares the page cache, and no read moves a file
// position (the seek+read race in the Python reader this replaces).
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size > math.MaxInt {
		return nil, nil, fmt.Errorf("file of %d bytes does not fit in the address space", size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap: %w", err)
	}
	return b, func() error { return unix.Munmap(b) }, nil
}

// mapWritable maps size bytes of f at off (any offset) for writing. The
// bytes must already exist in the file. done unmaps them; the kernel writes
// them back like any other dirty page, and Commit's fsync makes that durable.
func mapWritable(f *os.File, off int64, size int) (b []byte, done func() error, err error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	page := int64(os.Getpagesize())
	base := off &^ (page - 1)
	m, err := unix.Mmap(int(f.Fd()), base, size+int(off-base), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap: %w", err)
	}
	return m[off-base:], func() error { return unix.Munmap(m) }, nil
}

// openNonblock opens path for reading without blocking on a FIFO.
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
}

// dropPages removes b, whole pages of a file mapping, from the mapping.
func dropPages(b []byte) { unix.Madvise(b, unix.MADV_DONTNEED) }

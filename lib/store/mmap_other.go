//go:build !unix

package store

import (
	"fmt"
	"io"
	"math"
	"os"
)

// mapFile reads the file into memory where mmap is not available. Readers
// then share one heap copy per process instead of the page cache.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size > math.MaxInt {
		return nil, nil, fmt.Errorf("file of %d bytes does not fit in the address space", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// mapWritable has no mapping to offer here; see heapWritable.
func mapWritable(f *os.File, off int64, size int) ([]byte, func() error, error) {
	return heapWritable(f, off, size)
}

func openNonblock(path string) (*os.File, error) { return os.Open(path) }

// dropPages does nothing: the "mapping" is a heap copy.
func dropPages([]byte) {}

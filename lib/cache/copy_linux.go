package cache

import (
	"os"

	"golang.org/x/sys/unix"
)

// copyRange copies src to dst with copy_file_range(2). It returns done false
// (and nothing copied) when the kernel cannot copy between these two files,
// so that the caller falls back to read and write.
func copyRange(dst, src *os.File) (done bool, err error) {
	// No writeback hints here: measured on a 2 GiB store, starting the
	// writeback of each 64 MiB chunk made restore --copy 1.5x slower than
	// cp+fsync (the hint blocks on a busy disk queue); one fdatasync at the
	// end matches cp+fsync.
	const chunk = 1 << 30
	first := true
	for {
		n, err := unix.CopyFileRange(int(src.Fd()), nil, int(dst.Fd()), nil, chunk, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil && first && (err == unix.ENOSYS || err == unix.EXDEV || err == unix.EINVAL ||
			err == unix.EOPNOTSUPP || err == unix.EPERM || err == unix.EBADF || err == unix.EIO):
			// EIO too: some FUSE and network filesystems report it instead of ENOSYS.
			return false, nil
		case err != nil:
			return true, &os.PathError{Op: "copy_file_range", Path: dst.Name(), Err: err}
		case n == 0:
			return true, nil
		}
		first = false
	}
}

// datasync flushes f's data and the metadata needed to read it back
// (fdatasync(2)); unlike fsync it does not wait for a journal commit when
// only the mode or link count changed.
func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
		}
		return nil
	}
}

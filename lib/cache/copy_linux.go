package cache

import (
	"os"

	"golang.org/x/sys/unix"
)

// copyRange copies src to dst with copy_file_range(2). It returns done false
// (and nothing copied) when the kernel cannot copy between these two files,
// so that the caller falls back to read and write.
func copyRange(dst, src *os.File) (done bool, err error) {
	// 64 MiB at a time, starting the writeback of each chunk as it is done,
	// so that the fdatasync before publishing has little left to wait for.
	const chunk = 64 << 20
	first := true
	var off int64
	for {
		n, err := unix.CopyFileRange(int(src.Fd()), nil, int(dst.Fd()), nil, chunk, 0)
		if n > 0 {
			startWriteback(dst, off, int64(n))
			off += int64(n)
		}
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

// startWriteback starts writing n bytes of f at off to disk without waiting
// (sync_file_range(2) with SYNC_FILE_RANGE_WRITE). It is only a hint.
func startWriteback(f *os.File, off, n int64) {
	unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

package cache

import (
	"io"
	"os"
)

// copyFile copies src (from its current offset) to dst: with
// copy_file_range(2) where the kernel can (an in-kernel copy, or a reflink
// on filesystems that share blocks), else with read and write. plain skips
// straight to read and write.
func copyFile(dst, src *os.File, plain bool) error {
	if !plain {
		done, err := copyRange(dst, src)
		if done || err != nil {
			return err
		}
	}
	return plainCopy(dst, src)
}

// plainCopy is the last resort: a read/write loop with a 1 MiB buffer. The
// wrappers hide os.File's ReadFrom and WriteTo so that io.CopyBuffer really
// does read and write.
func plainCopy(dst, src *os.File) error {
	buf := make([]byte, 1<<20)
	_, err := io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, buf)
	return err
}

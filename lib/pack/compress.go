package pack

import (
	"fmt"
	"io"
	"os"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/klauspost/compress/zstd"
)

// Compress writes a zstd stream of the store file src to dst, atomically.
// SpeedDefault compresses chat JSON about 3.9x here (reference/limits.md §4).
func Compress(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := atomicfile.Create(dst)
	if err != nil {
		return err
	}
	defer out.Abort()
	zw, err := zstd.NewWriter(out, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return err
	}
	if _, err := io.Copy(zw, in); err != nil {
		zw.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return out.Commit()
}

// Unpack decompresses a zstd stream into the store file dst. The result is
// opened and its checksum verified before it is renamed into place.
func Unpack(dst string, src io.Reader, srcName string) error {
	zr, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return err
	}
	defer zr.Close()
	out, err := atomicfile.Create(dst)
	if err != nil {
		return err
	}
	defer out.Abort()
	if _, err := io.Copy(out, zr); err != nil {
		return fmt.Errorf("unpack %s: %w", srcName, err)
	}
	if err := out.Sync(); err != nil {
		return err
	}
	r, err := store.Open(out.TempName(), store.OpenOptions{})
	if err != nil {
		return fmt.Errorf("unpack %s: %w", srcName, err)
	}
	err = r.Verify()
	r.Close()
	if err != nil {
		return fmt.Errorf("unpack %s: %w", srcName, err)
	}
	return out.Commit()
}

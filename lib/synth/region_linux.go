package synth

import "golang.org/x/sys/unix"

// region is memory outside the Go heap that grows in place: anonymous
// pages that cost nothing until written, grown with mremap, which moves page
// tables rather than bytes. So the block table never holds an old and a new
// copy at once, and no garbage waits for the collector.
type region struct{ b []byte }

const pageSize = 4096

// resize makes the region n bytes long, keeping its contents (the new bytes
// are zero).
func (r *region) resize(n int) error {
	n = (n + pageSize - 1) &^ (pageSize - 1)
	if r.b == nil {
		b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return err
		}
		r.b = b
		return nil
	}
	b, err := unix.Mremap(r.b, n, unix.MREMAP_MAYMOVE)
	if err != nil {
		return err
	}
	r.b = b
	return nil
}

func (r *region) free() {
	if r.b != nil {
		_ = unix.Munmap(r.b)
		r.b = nil
	}
}
